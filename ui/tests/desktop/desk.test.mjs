// The curator's desk (issue 15, "Add" 7–12) and the Trace view (issue 13
// §6) in the real desktop window: WebKitGTK under LC_ALL=C, driven over
// WebDriver, where downloads and the clipboard work differently from
// Chromium. Exports land in the download folder through the shell's
// `save_file` ($KIP_DOWNLOAD_DIR here); the clipboard is read back from X.
// Run under Xvfb (scripts/test.sh does).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, readdirSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repo, kipBin, screenshots } from '../e2e/harness.mjs';
import { openWindow } from './window.mjs';

const PORT = 15444 + 2 * (process.pid % 1000);
const SHIFT = '\uE008';

let desktop;
let browser;
let dir;
let db;
let downloads;

before(async () => {
  if (!existsSync(kipBin)) throw new Error(`kip is missing at ${kipBin} (scripts/test.sh builds it)`);
  dir = mkdtempSync(join(tmpdir(), 'kip-desk-'));
  db = join(dir, 'nexus');
  downloads = join(dir, 'downloads');
  mkdirSync(join(dir, 'capsules'));
  execFileSync(kipBin, ['--db', db, 'import', join(repo, 'capsules/examples/10_medical_schema.kip'), join(repo, 'capsules/examples/11_medical_data.kip')], { stdio: 'ignore' });
  // The window's environment comes from tauri-driver's: where exports go.
  process.env.KIP_DOWNLOAD_DIR = downloads;
  desktop = await openWindow(PORT, ['--db', db, '--capsules', join(dir, 'capsules')], { configDir: join(dir, 'config') });
  ({ browser } = desktop);
  mkdirSync(screenshots, { recursive: true });
  await browser.waitUntil(() => browser.execute(() => window.kipExplorer?.firstGraphPaintMs !== undefined), { timeout: 60_000, timeoutMsg: 'the graph never painted' });
  await settled();
});

after(async () => {
  await desktop?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const kip = (...args) => execFileSync(kipBin, ['--db', db, ...args], { encoding: 'utf8' });
const pause = (ms) => new Promise((r) => setTimeout(r, ms));
const byId = (id) => browser.$(`[data-testid="${id}"]`);
const click = async (id) => {
  const el = await byId(id);
  await el.waitForClickable({ timeout: 15_000 });
  await el.click();
};
/** A kip-api operation through the shell, as the page calls it. */
const apiCall = (operation, body) =>
  browser.executeAsync((op, b, done) => window.__TAURI_INTERNALS__.invoke('api_call', { operation: op, body: b }).then(done, (e) => done({ failed: e })), operation, body);

async function frames() {
  await browser.executeAsync((done) => requestAnimationFrame(() => requestAnimationFrame(() => done())));
}
async function shot(name) {
  await frames();
  await browser.saveScreenshot(join(screenshots, `desktop-${name}.png`));
}
async function settled() {
  await browser.waitUntil(() => browser.execute(() => !!window.kipExplorer?.layoutRunning && !window.kipExplorer.layoutRunning()), { timeout: 30_000, timeoutMsg: 'the layout never settled' });
}
const nodes = () => browser.execute(() => window.kipExplorer.graphNodes());
const nodeByLabel = async (text) => (await nodes()).find((n) => n.label.includes(text)) ?? null;
const style = (id) => browser.execute((n) => window.kipExplorer.nodeStyle(n), id);

/** A form field set the way Svelte's bindings hear it (range and colour inputs take no typing). */
async function setField(selector, value) {
  await browser.execute((sel, v) => {
    const el = document.querySelector(sel);
    el.value = v;
    el.dispatchEvent(new Event('input', { bubbles: true }));
    el.dispatchEvent(new Event('change', { bubbles: true }));
  }, selector, value);
}

/** Replaces the console editor's text, as typing or pasting would (no auto-closed brackets). */
async function write(text) {
  const content = await browser.$('.cm-content');
  await content.click();
  await browser.execute((t) => {
    document.execCommand('selectAll');
    document.execCommand('insertText', false, t);
  }, text);
  await browser.waitUntil(async () => (await browser.execute(() => document.querySelector('.cm-content').innerText)).replace(/\s+/g, '') === text.replace(/\s+/g, ''), { timeout: 5000, timeoutMsg: 'the editor did not take the text' });
}

/** The files saved in the download folder. */
const saved = () => (existsSync(downloads) ? readdirSync(downloads) : []);
async function savedFile(name, trigger) {
  const had = new Set(saved());
  await trigger();
  let file;
  await browser.waitUntil(() => (file = saved().find((f) => !had.has(f) && f.startsWith(name.replace(/\.[^.]+$/, '')))), { timeout: 15_000, timeoutMsg: `${name} was not saved in the download folder` });
  await pause(200);
  return { name: file, bytes: readFileSync(join(downloads, file)) };
}

/** The X clipboard's text, read as another application would. */
function clipboard() {
  return execFileSync('/usr/bin/python3', ['-c', 'import gi\ngi.require_version("Gtk", "3.0")\nfrom gi.repository import Gtk, Gdk\nprint(Gtk.Clipboard.get(Gdk.SELECTION_CLIPBOARD).wait_for_text() or "", end="")'], { encoding: 'utf8', timeout: 10_000 });
}

/**
 * The first element matching `selector` whose text includes `text` (waited
 * for): marked with an attribute of its own, as WebDriver has no text selector
 * for attribute matches.
 */
let picks = 0;
async function withText(selector, text, timeout = 15_000) {
  const mark = `p${++picks}`;
  await browser.waitUntil(
    () => browser.execute((sel, t, m) => {
      const el = [...document.querySelectorAll(sel)].find((e) => e.textContent.includes(t));
      if (el) el.setAttribute('data-wd-pick', m);
      return !!el;
    }, selector, text, mark),
    { timeout, timeoutMsg: `no ${selector} with “${text}”` },
  );
  return browser.$(`[data-wd-pick="${mark}"]`);
}

/** Where a node is drawn, in viewport pixels, and whether the canvas is what lies there. */
async function nodePoint(id) {
  return browser.execute((n) => {
    const pos = window.kipExplorer.nodePosition(n);
    const box = document.querySelector('[data-testid=graph-canvas]').getBoundingClientRect();
    if (!pos) return null;
    const x = box.left + pos.x;
    const y = box.top + pos.y;
    return { x: Math.round(x), y: Math.round(y), free: document.elementFromPoint(x, y)?.tagName === 'CANVAS' };
  }, id);
}

/** A real pointer click on the canvas (with Shift held when `shift`). */
async function clickAt({ x, y }, shift = false) {
  const pointer = [
    { type: 'pause', duration: 0 },
    { type: 'pointerMove', origin: 'viewport', x, y, duration: 0 },
    { type: 'pointerDown', button: 0 },
    { type: 'pointerUp', button: 0 },
    { type: 'pause', duration: 0 },
  ];
  const keys = shift
    ? [{ type: 'keyDown', value: SHIFT }, { type: 'pause', duration: 0 }, { type: 'pause', duration: 0 }, { type: 'pause', duration: 0 }, { type: 'keyUp', value: SHIFT }]
    : pointer.map(() => ({ type: 'pause', duration: 0 }));
  await browser.performActions([
    { type: 'key', id: 'keyboard', actions: keys },
    { type: 'pointer', id: 'mouse', parameters: { pointerType: 'mouse' }, actions: pointer },
  ]);
  await browser.releaseActions();
  await pause(200);
}

async function clickNode(id, shift = false) {
  const p = await nodePoint(id);
  if (!p?.free) {
    const over = await browser.execute((q) => (q ? document.elementFromPoint(q.x, q.y)?.outerHTML.slice(0, 200) : 'not drawn'), p);
    await shot(`desk-covered-${id.replace(':', '')}`);
    assert.fail(`${id} at ${JSON.stringify(p)} is drawn under another element: ${over}`);
  }
  await clickAt(p, shift);
}

async function graphKey(...keys) {
  await browser.execute(() => document.querySelector('.graph-view')?.focus());
  await browser.keys(keys);
  await pause(150);
}

async function dismissToasts() {
  for (const b of await browser.$$('button[aria-label="Dismiss"]')) await b.click().catch(() => {});
}

async function legendOpen() {
  const stats = await byId('graph-stats');
  if ((await stats.getAttribute('aria-expanded')) !== 'true') await stats.click();
}

/** Starts from the given drugs alone in the graph (picked in the search box). */
async function only(...names) {
  await click('nav-graph');
  for (let attempt = 0; attempt < 3 && (await nodes()).length > 0; attempt++) {
    const clear = await browser.$('button=Clear');
    await clear.waitForClickable({ timeout: 5000 });
    await clear.click();
    await browser.waitUntil(async () => (await nodes()).length === 0, { timeout: 3000 }).catch(() => {});
  }
  if ((await nodes()).length > 0) {
    await shot('desk-not-cleared');
    assert.fail(`the graph was not cleared: ${(await nodes()).length} nodes`);
  }
  for (const name of names) {
    const search = await browser.$('input[aria-label="Search concepts"]');
    await search.clearValue();
    await search.setValue(name);
    const mark = `o${++picks}`;
    await browser.waitUntil(
      () => browser.execute((n, m) => {
        const el = [...document.querySelectorAll('[role=option]')].find((o) => o.textContent.includes(n) && o.textContent.includes('Drug'));
        el?.querySelector('button')?.setAttribute('data-wd-pick', m);
        return !!el;
      }, name, mark),
      { timeout: 10_000, timeoutMsg: `no search result for ${name}` },
    );
    await (await browser.$(`[data-wd-pick="${mark}"]`)).click();
    await browser.waitUntil(async () => !!(await nodeByLabel(name)), { timeout: 10_000 });
  }
  await graphKey('Escape');
  await settled();
  await dismissToasts();
  await graphKey('f');
  await pause(400);
}

test('7. styling rules in the legend: a type colour and size by risk_level restyle the nodes, kept with the nexus', async () => {
  for (const type of ['Symptom', 'Drug']) {
    await click('nav-primer');
    const chip = await browser.$(`[data-testid=primer-domain][data-domain=Medical] [data-testid=primer-type][data-type=${type}]`);
    await chip.waitForClickable({ timeout: 15_000 });
    await chip.click();
    await browser.waitUntil(async () => (await nodes()).filter((n) => n.type === type).length >= 3, { timeout: 15_000, timeoutMsg: `no ${type} nodes` });
    // The app shows the graph once the links are in too: back to the
    // Primer only then, or the switch to the graph lands on top of it.
    await browser.waitUntil(async () => (await (await browser.$('[data-testid=nav-graph]')).getAttribute('aria-current')) === 'page', { timeout: 15_000, timeoutMsg: 'the graph was not shown' });
  }
  await click('nav-graph');
  await settled();
  await legendOpen();
  const symptom = (await nodes()).find((n) => n.type === 'Symptom');
  const colourBefore = (await style(symptom.id)).color;

  await click('style-add');
  await (await byId('rule-on')).selectByAttribute('value', 'type');
  await (await byId('rule-name')).selectByVisibleText('Symptom');
  await setField('[data-testid=rule-color]', '#1c7ed6');
  await click('rule-add');
  await browser.waitUntil(async () => (await style(symptom.id)).color === '#1c7ed6', { timeout: 10_000, timeoutMsg: `the Symptom colour stayed ${colourBefore}` });

  await click('style-add');
  await (await byId('rule-on')).selectByAttribute('value', 'property');
  // The property is chosen from the keys the scene holds (issue 33 §10).
  await (await byId('rule-name')).selectByAttribute('value', 'risk_level');
  await (await byId('rule-match')).selectByAttribute('value', 'scale');
  await (await byId('rule-scale')).selectByAttribute('value', 'size');
  await click('rule-add');
  assert.equal((await browser.$$('[data-testid=style-rule]')).length, 2);
  const mefenamic = await nodeByLabel('Mefenamic'); // risk 4
  const paracetamol = await nodeByLabel('Paracetamol'); // risk 1
  await browser.waitUntil(async () => (await style(mefenamic.id)).size > (await style(paracetamol.id)).size, { timeout: 10_000, timeoutMsg: 'size does not follow risk_level' });
  await graphKey('f');
  await pause(400);
  await shot('desk-7-styling-rules');
  const stored = await apiCall('settings_get', { prefix: 'ui.styles' });
  assert.equal(stored.values['ui.styles'].length, 2);
  for (let i = 0; i < 2; i++) await (await browser.$('[data-testid=style-rule] button')).click();
  await browser.waitUntil(async () => (await browser.$$('[data-testid=style-rule]')).length === 0, { timeout: 5000 });
});

test('8. saved queries: saved with a parameter, run from the list, exported as a .kip file', async () => {
  await click('nav-console');
  await write('FIND(?d.name) WHERE {\n  ?d {type: :type}\n}\nORDER BY ?d.name');
  const paramsTab = await withText('.side [role=tab]', 'Parameters');
  await paramsTab.click();
  const param = await browser.$('.params input');
  await param.waitForExist({ timeout: 10_000 });
  await param.setValue('"Drug"');
  await click('tab-saved');
  await click('save-query');
  await (await byId('save-name')).setValue('Drugs by name');
  await (await byId('save-description')).setValue('Every drug, alphabetically.');
  await click('save-confirm');
  const entry = await withText('[data-testid=saved-query]', 'Drugs by name');

  await write('FIND(?s) WHERE { ?s {type: "Symptom"} }');
  await (await entry.$('[data-testid=saved-run]')).click();
  await browser.waitUntil(async () => /rows/.test(await (await byId('result-meta')).getText()), { timeout: 15_000, timeoutMsg: 'the saved query did not run' });
  const names = await browser.execute(() => [...document.querySelectorAll('[data-testid=result] tbody tr td:nth-child(2)')].map((td) => td.innerText));
  assert.deepEqual(names, JSON.parse(kip('exec', 'FIND(?d.name) WHERE { ?d {type: "Drug"} } ORDER BY ?d.name')).result);
  await shot('desk-8-saved-queries');

  const file = await savedFile('saved-queries.kip', () => click('export-queries'));
  assert.equal(file.name, 'saved-queries.kip');
  assert.match(file.bytes.toString('utf8'), /\/\/ @query Drugs by name\n\/\/ @description Every drug, alphabetically.\n\/\/ @param :type = "Drug"\nFIND\(\?d\.name\)/);
  const check = await apiCall('validate', { text: file.bytes.toString('utf8') });
  assert.equal(check.ok, true, JSON.stringify(check));
});

test('9. exports in the window: CSV and the clipboard, graph SVG and PNG saved to the download folder, a scene reopened', async () => {
  // The saved query's table is still shown.
  const csv = await savedFile('kip-result.csv', () => click('export-csv'));
  const lines = csv.bytes.toString('utf8').trim().split('\r\n');
  assert.equal(lines[0], '?d.name');
  assert.ok(lines.includes('Aspirin') && lines.includes('Ibuprofen'), lines.join('|'));
  // A notice says where the file went.
  await browser.waitUntil(async () => (await browser.execute(() => document.body.innerText)).includes(join(downloads, 'kip-result.csv')), { timeout: 5000, timeoutMsg: 'no notice names the saved file' });
  await shot('desk-9a-saved-notice');
  await click('copy-table');
  await browser.waitUntil(() => clipboard().split('\n').length === lines.length, { timeout: 10_000, timeoutMsg: `the clipboard holds: ${clipboard()}` });
  assert.match(clipboard(), /^\?d\.name\n/);

  await only('Aspirin', 'Ibuprofen');
  const svg = await savedFile('kip-graph.svg', async () => {
    await click('export-menu');
    await click('export-svg');
  });
  assert.match(svg.bytes.toString('utf8'), /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  assert.match(svg.bytes.toString('utf8'), />[^<]*Aspirin<\/text>/);
  const png = await savedFile('kip-graph.png', async () => {
    await click('export-menu');
    await click('export-png');
  });
  assert.deepEqual([...png.bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  assert.ok(png.bytes.length > 2000, `a PNG of ${png.bytes.length} bytes`);

  // A scene: pinned in place, cleared, reopened.
  const aspirin = await nodeByLabel('Aspirin');
  await dismissToasts();
  await clickNode(aspirin.id);
  await graphKey('p');
  const layout = async () => (await nodes()).map((n) => ({ id: n.id, pinned: n.pinned })).sort((a, b) => a.id.localeCompare(b.id));
  const before = await layout();
  assert.ok(before.some((n) => n.pinned));
  await click('export-menu');
  await (await byId('scene-name')).setValue('Two NSAIDs');
  await click('scene-save');
  await (await browser.$('button=Clear')).click();
  await browser.waitUntil(async () => (await nodes()).length === 0, { timeout: 10_000 });
  await click('export-menu');
  await (await (await withText('[data-testid=scene]', 'Two NSAIDs')).$('button')).click();
  await browser.waitUntil(async () => (await nodes()).length === before.length, { timeout: 10_000, timeoutMsg: 'the scene did not reopen' });
  assert.deepEqual(await layout(), before);
  // Framed where they were saved: both drawn on the canvas, clear of the panels.
  // The "Saved" and "Opened" notices float over the canvas for a few
  // seconds and may cover a node wherever the fit puts it: dismissed first
  // (they are not panels); a failure keeps a screenshot.
  await dismissToasts();
  try {
    await browser.waitUntil(async () => {
      await dismissToasts();
      for (const n of before) if (!(await nodePoint(n.id))?.free) return false;
      return true;
    }, { timeout: 5000, timeoutMsg: 'the reopened scene is not framed' });
  } catch (e) {
    await shot('desk-9b-not-framed');
    throw e;
  }
  await pause(400);
  await shot('desk-9b-scene-reopened');
});

test('10. shift-click and a lasso select several; hide and remove them at once; Ctrl+Z / Ctrl+Shift+Z undo and redo', async () => {
  await click('nav-primer');
  await (await browser.$('[data-testid=primer-domain][data-domain=Medical] [data-testid=primer-type][data-type=Drug]')).click();
  await browser.waitUntil(async () => (await nodes()).length >= 5, { timeout: 15_000 });
  await click('nav-graph');
  await settled();
  await graphKey('f');
  await pause(400);
  await graphKey('Escape');
  await pause(600);
  const all = (await nodes()).filter((n) => !n.hidden);
  const total = all.length;
  const free = [];
  for (const n of all) if ((await nodePoint(n.id))?.free) free.push(n);
  assert.ok(free.length >= 2, 'two nodes to click');
  await clickNode(free[0].id, true);
  await clickNode(free[1].id, true);
  assert.deepEqual(await browser.execute(() => window.kipExplorer.selection()), [free[0].id, free[1].id]);
  assert.equal(await (await byId('selection-count')).getText(), '2 selected');

  // A lasso with Shift held, around the canvas clear of the panels.
  const area = await browser.execute(() => {
    const box = document.querySelector('[data-testid=graph-canvas]').getBoundingClientRect();
    const o = window.kipExplorer.overlays();
    return { left: Math.round(box.left + Math.max(o.legend ? o.legend.x + o.legend.w : 0, 0) + 4), top: Math.round(box.top + o.toolbar.y + o.toolbar.h + 4), right: Math.round(box.right - 4), bottom: Math.round(box.bottom - 4) };
  });
  const corners = [[area.right, area.top], [area.right, area.bottom], [area.left, area.bottom], [area.left, area.top + 2]];
  const moves = [{ type: 'pointerMove', origin: 'viewport', x: area.left, y: area.top, duration: 0 }, { type: 'pointerDown', button: 0 }];
  let [px, py] = [area.left, area.top];
  for (const [x, y] of corners) {
    for (let i = 1; i <= 6; i++) moves.push({ type: 'pointerMove', origin: 'viewport', x: Math.round(px + ((x - px) * i) / 6), y: Math.round(py + ((y - py) * i) / 6), duration: 16 });
    [px, py] = [x, y];
  }
  moves.push({ type: 'pointerUp', button: 0 });
  await browser.performActions([
    { type: 'key', id: 'keyboard', actions: [{ type: 'keyDown', value: SHIFT }, ...moves.map(() => ({ type: 'pause', duration: 0 })), { type: 'keyUp', value: SHIFT }] },
    { type: 'pointer', id: 'mouse', parameters: { pointerType: 'mouse' }, actions: [{ type: 'pause', duration: 0 }, ...moves, { type: 'pause', duration: 0 }] },
  ]);
  await browser.releaseActions();
  await pause(300);
  const selected = await browser.execute(() => window.kipExplorer.selection());
  assert.ok(selected.length > 2, `the lasso added nodes: ${selected.length}`);
  await shot('desk-10a-selected');

  const visible = async () => (await nodes()).filter((n) => !n.hidden).length;
  await (await withText('[aria-label="Graph tools"] button', 'Hide')).click();
  assert.equal(await visible(), total - selected.length);
  await graphKey('Control', 'z');
  assert.equal(await visible(), total);
  await graphKey('Control', 'Shift', 'z');
  assert.equal(await visible(), total - selected.length);
  await graphKey('Control', 'z');
  assert.equal(await visible(), total);

  // Two removed at once; undo brings both back.
  await clickNode(free[0].id, true);
  await clickNode(free[1].id, true);
  await graphKey('Delete');
  assert.equal((await nodes()).length, total - 2);
  await shot('desk-10b-removed');
  await click('undo');
  assert.equal((await nodes()).length, total);
  await shot('desk-10c-undone');
});

test('11. paths between two selected concepts: the engine’s shortest paths, drawn', async () => {
  await only('Aspirin', 'Ibuprofen');
  const aspirin = await nodeByLabel('Aspirin');
  const ibuprofen = await nodeByLabel('Ibuprofen');
  await settled();
  await clickNode(aspirin.id, true);
  await browser.waitUntil(async () => (await browser.execute(() => window.kipExplorer.selection())).includes(aspirin.id), { timeout: 5000, timeoutMsg: 'the shift-click did not select Aspirin' });
  await clickNode(ibuprofen.id, true);
  await browser.waitUntil(async () => (await browser.execute(() => window.kipExplorer.selection())).length === 2, { timeout: 5000 }).catch(() => {});
  assert.deepEqual(await browser.execute(() => window.kipExplorer.selection()), [aspirin.id, ibuprofen.id]);
  await click('find-paths');
  const hops = await byId('paths-hops');
  await hops.clearValue();
  await hops.setValue('3');
  await click('paths-run');
  await browser.waitUntil(() => browser.execute(() => window.kipExplorer.pathLinks().length > 0), { timeout: 15_000, timeoutMsg: 'no path drawn' });
  const engine = await apiCall('paths', { from: { id: aspirin.id }, to: { id: ibuprofen.id }, max_hops: 3 });
  assert.equal(engine.hops, 2);
  // The view keeps out of the domain hub (issue 33 §7): the engine's paths but those through belongs_to_domain.
  const predicateOf = new Map(engine.elements.map((e) => [e.id, e.predicate]));
  const outsideDomains = engine.paths.filter((p) => p.links.every((l) => predicateOf.get(l) !== 'belongs_to_domain'));
  assert.ok(outsideDomains.length > 0 && outsideDomains.length < engine.paths.length);
  const drawn = (await browser.execute(() => window.kipExplorer.pathLinks())).sort();
  assert.deepEqual(drawn, [...new Set(outsideDomains.flatMap((p) => p.links))].sort());
  assert.ok(await nodeByLabel('NSAID'), 'the shared class is on a path');
  await settled();
  await graphKey('f');
  await pause(400);
  await shot('desk-11-paths');
});

test('12. time: the range slider hides what is older; "what changed since" marks the fresh write', async () => {
  await graphKey('Escape');
  await only('Aspirin', 'Ibuprofen', 'Paracetamol');
  await pause(1100);
  kip('exec', 'UPSERT { CONCEPT ?d { {type: "Drug", name: "Ibuprofen"} SET ATTRIBUTES { note: "checked" } } }');
  const ibuprofen = await nodeByLabel('Ibuprofen');
  await legendOpen();
  const slider = await byId('time-from');
  await slider.waitForExist({ timeout: 15_000 });
  // The window hears of the other process's write and offers its time.
  await browser.waitUntil(async () => {
    await setField('[data-testid=time-from]', await slider.getAttribute('max'));
    return (await nodes()).filter((n) => !n.hidden).map((n) => n.id).join() === ibuprofen.id;
  }, { timeout: 15_000, timeoutMsg: 'the time window did not narrow to the fresh write' });
  await shot('desk-12a-time-window');
  await setField('[data-testid=time-from]', '0');
  await browser.waitUntil(async () => (await nodes()).every((n) => !n.hidden), { timeout: 5000 });
  await (await byId('changed-since')).selectByAttribute('value', '10m');
  await browser.waitUntil(async () => (await browser.execute(() => window.kipExplorer.markedNodes())).includes(ibuprofen.id), { timeout: 5000, timeoutMsg: 'the fresh write is not marked' });
  await shot('desk-12b-changed-since');
});

test('13 §6. the Trace view in the window: filter, expand the diff, revert; the inspector’s history reverts to an entry', async () => {
  kip('--originator', 'agent-x', 'exec', 'UPSERT { CONCEPT ?p { {type: "Symptom", name: "Vertigo"} SET ATTRIBUTES { severity: "mild" } } }');
  await click('nav-trace');
  await (await byId('trace-view')).waitForExist({ timeout: 10_000 });
  const entry = await withText('[data-testid=trace-entry]', 'UPSERT: created 1 concept', 20_000);
  await (await byId('trace-filter-text')).setValue('Vertigo');
  await click('trace-apply');
  // Only the write of Vertigo is left of the TRACE entries (its command names it).
  await browser.waitUntil(() => browser.execute(() => [...document.querySelectorAll('[data-testid=trace-entry][data-type=TRACE]')].length === 1), { timeout: 10_000, timeoutMsg: 'the filter did not narrow the timeline' });
  await (await entry.$('[data-testid=trace-entry-toggle]')).click();
  const detail = await entry.$('[data-testid=trace-detail]');
  await detail.waitForExist({ timeout: 10_000 });
  assert.match(await (await detail.$('[data-testid=trace-command]')).getText(), /Vertigo/);
  assert.equal(await (await detail.$('[data-testid=change]')).getAttribute('data-op'), 'created');
  await shot('desk-13a-trace-expanded');
  await (await detail.$('[data-testid=trace-revert]')).click();
  // Revert asks first, showing what it will undo (issue 33 §3).
  const confirm = await detail.$('[data-testid=trace-revert-confirm]');
  await confirm.waitForExist({ timeout: 10_000 });
  await (await confirm.$('[data-testid=trace-revert-go]')).click();
  await browser.waitUntil(async () => /Reverted/.test(await (await byId('trace-notice')).getText().catch(() => '')), { timeout: 10_000, timeoutMsg: 'no revert notice' });
  assert.equal(JSON.parse(kip('exec', 'FIND(COUNT(?s)) WHERE { ?s {type: "Symptom", name: "Vertigo"} }')).result, 0);
  await shot('desk-13b-trace-reverted');
  // The filtered view exported as JSON Lines, saved by the shell.
  const jsonl = await savedFile('trace.jsonl', () => click('trace-export'));
  const exported = jsonl.bytes.toString('utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.ok(exported.some((e) => e.originator === 'agent-x' && e.type === 'TRACE'), JSON.stringify(exported));

  // An element's history in the inspector, and "revert to here".
  for (const severity of ['mild', 'moderate', 'severe']) {
    kip('--originator', 'agent-h', 'exec', `UPSERT { CONCEPT ?s { {type: "Symptom", name: "Dizziness"} SET ATTRIBUTES { severity: "${severity}" } } }`);
  }
  await click('nav-graph');
  const search = await browser.$('input[aria-label="Search concepts"]');
  await search.clearValue();
  await search.setValue('Dizziness');
  await (await (await withText('[role=option]', 'Dizziness')).$('button')).click();
  const rows = () => browser.execute(() => [...document.querySelectorAll('[data-testid=element-history] [data-testid=history-entry]')].map((r) => ({ id: r.dataset.id, undone: r.classList.contains('undone') })));
  await browser.waitUntil(async () => (await rows()).length === 3, { timeout: 15_000, timeoutMsg: 'the history does not list the three writes' });
  const oldest = await browser.$(`[data-testid=history-entry][data-id="${(await rows())[2].id}"]`);
  await oldest.scrollIntoView();
  await (await oldest.$('[data-testid=history-toggle]')).click();
  await shot('desk-13c-inspector-history');
  await (await oldest.$('[data-testid=history-revert-to]')).click();
  await browser.waitUntil(async () => (await rows()).length === 5, { timeout: 15_000, timeoutMsg: 'the two reverts are not in the history' });
  assert.equal((await rows()).filter((r) => r.undone).length, 2);
  assert.equal(JSON.parse(kip('exec', 'FIND(COUNT(?s)) WHERE { ?s {type: "Symptom", name: "Dizziness"} FILTER(?s.attributes.severity == "mild") }')).result, 1);
  await shot('desk-13d-inspector-reverted');
});

test('29 §2. apply as owner: a persona the protected scope refuses is previewed with the engine’s diff, then applied and traced', async () => {
  const persona = readFileSync(join(repo, 'tests/data/kip-rc11-official/persons/system.kip'), 'utf8');
  await click('nav-import');
  // A file chosen in the page (the OS drop hands the shell paths instead; both reach the same command).
  await browser.execute((text) => window.dispatchEvent(new CustomEvent('kip-drop', { detail: [new File([text], 'system.kip')] })), persona);
  const report = await withText('[data-testid=import-reports] li', 'system.kip', 20_000);
  assert.match(await report.getText(), /KIP_3004/);
  await (await report.$('[data-testid=owner-preview]')).click();
  const dialog = await byId('owner-apply');
  await dialog.waitForExist({ timeout: 15_000 });
  // The engine's dry run: $system's protected core_directives, before → after; nothing written yet.
  assert.match(await dialog.getText(), /Protected[\s\S]*\$system/);
  const directives = () => JSON.parse(kip('exec', 'FIND(?s.attributes.core_directives) WHERE { ?s {type: "Person", name: "$system"} }')).result;
  const before = directives();
  await shot('desk-29a-owner-preview');
  assert.deepEqual(directives(), before);
  await click('owner-apply-confirm');
  await browser.waitUntil(async () => /Imported/.test(await (await withText('[data-testid=import-reports] li', 'system.kip')).getText()), { timeout: 15_000, timeoutMsg: 'the owner import did not land' });
  assert.notDeepEqual(directives(), before);
  const traced = kip('trace', 'list', '--tag', 'OwnerAuthority').trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(traced.length, 1, JSON.stringify(traced));
  assert.equal(traced[0].originator, 'curator');
  await shot('desk-29b-owner-applied');
});

test('31 §2. the Health view in the window: the engine’s counts and the duplicates queue', async () => {
  kip('exec', 'UPSERT { CONCEPT ?d { {type: "Drug", name: "ASPIRIN"} } }');
  await click('nav-health');
  await (await byId('health-view')).waitForExist({ timeout: 15_000 });
  const engine = JSON.parse(kip('health'));
  const orphans = await byId('health-orphans');
  await browser.waitUntil(async () => (await orphans.getAttribute('data-count')) === String(engine.orphans.count), { timeout: 15_000, timeoutMsg: 'the orphans count differs from kip health' });
  await withText('[data-testid=duplicate]', 'ASPIRIN', 15_000);
  await shot('desk-31-health');
});

test('31 §9. the schema map in the window: types with the engine’s counts, a type opens its concepts', async () => {
  await click('nav-health');
  await click('health-schema-map');
  await (await byId('schema-map')).waitForExist({ timeout: 15_000 });
  const engine = JSON.parse(kip('schema', '--map'));
  const drug = engine.types.find((t) => t.name === 'Drug');
  const node = await browser.$('[data-testid="schema-map-type"][data-type="Drug"]');
  await node.waitForExist({ timeout: 15_000 });
  assert.equal(await node.getAttribute('data-count'), String(drug.count));
  await shot('desk-31-schema-map');
  // An SVG group is not "interactable" to WebKit's driver: the keyboard opens it, as a person may.
  await browser.execute((el) => el.focus(), node);
  await browser.keys('Enter');
  await (await byId('schema-map')).waitForExist({ reverse: true, timeout: 15_000 });
  await browser.waitUntil(async () => (await nodes()).some((n) => n.type === 'Drug'), { timeout: 15_000, timeoutMsg: 'the Drug concepts did not open' });
});

test('31 §4 §5. in the window: a contradiction resolved after the preview, an expired memory archived from decay triage', async () => {
  kip('exec', `UPSERT {
    CONCEPT ?t { {type: "$ConceptType", name: "Place"} SET ATTRIBUTES { description: "A place." } }
    CONCEPT ?p { {type: "$PropositionType", name: "born_in"} SET ATTRIBUTES { description: "Where a person was born.", subject_types: ["Person"], object_types: ["Place"], functional: true } }
    CONCEPT ?paris { {type: "Place", name: "Paris"} }
    CONCEPT ?lyon { {type: "Place", name: "Lyon"} }
  }`);
  kip('exec', 'UPSERT { CONCEPT ?ada { {type: "Person", name: "Ada"} SET PROPOSITIONS { ("born_in", {type: "Place", name: "Paris"}) } } } WITH METADATA { source: "letter-1843", confidence: 0.9 }');
  kip('exec', 'UPSERT { CONCEPT ?ada { {type: "Person", name: "Ada"} SET PROPOSITIONS { ("born_in", {type: "Place", name: "Lyon"}) } } } WITH METADATA { source: "chat-7", confidence: 0.4 }');
  kip('exec', 'UPSERT { CONCEPT ?d { {type: "Drug", name: "Old remedy"} } WITH METADATA { expires_at: "2001-01-01T00:00:00Z" } }');
  await click('nav-health');
  const count = await byId('health-contradictions');
  await browser.waitUntil(async () => (await count.getAttribute('data-count')) === '1', { timeout: 15_000, timeoutMsg: 'the contradiction is not counted' });
  await click('health-open-contradictions');
  const paris = await browser.$('[data-testid=contradiction][data-subject="Ada"] [data-testid=contradiction-side][data-object="Paris"]');
  await paris.waitForExist({ timeout: 15_000 });
  // A toast from an earlier step may lie over the queue: out of the way first.
  await dismissToasts();
  await (await paris.$('[data-testid=contradiction-keep]')).click();
  await (await byId('kml-preview')).waitForExist({ timeout: 15_000 }).catch(async (e) => {
    await shot('desk-31-no-preview');
    throw e;
  });
  await shot('desk-31-contradiction-preview');
  await click('kml-apply');
  await browser.waitUntil(() => JSON.parse(kip('contradictions')).length === 0, { timeout: 15_000, timeoutMsg: 'the contradiction was not resolved' });

  await click('health-triage-expired');
  // The list re-reads on every write the window hears of (the resolve
  // above): choose the row once the list stands, and see it chosen.
  await browser.waitUntil(async () => {
    const item = await withText('[data-testid=triage-item]', 'Old remedy');
    const box = await item.$('[data-testid=triage-check]');
    if (!(await box.isSelected())) await box.click();
    return (await box.isSelected()) && (await (await byId('triage-action-archive')).isEnabled());
  }, { timeout: 15_000, timeoutMsg: 'Old remedy could not be chosen' });
  await click('triage-action-archive');
  await (await byId('triage-preview')).waitForExist({ timeout: 15_000 });
  await shot('desk-31-triage-preview');
  await click('triage-apply');
  await browser.waitUntil(() => !JSON.stringify(JSON.parse(kip('triage', 'expired'))).includes('Old remedy'), { timeout: 15_000, timeoutMsg: 'Old remedy was not archived' });
});

test('31 §6 §8. in the window: the graph as of a past write and back; the recall simulator ranks with score parts', async () => {
  await click('nav-graph');
  await click('time-travel-toggle');
  await (await byId('time-slider')).waitForExist({ timeout: 15_000 });
  await setField('[data-testid=time-slider]', '0');
  await (await byId('as-of-banner')).waitForExist({ timeout: 15_000 });
  await shot('desk-31-as-of');
  await click('back-to-now');
  await (await byId('as-of-banner')).waitForExist({ reverse: true, timeout: 15_000 });

  await click('nav-health');
  await setField('[data-testid=recall-text]', 'Headache');
  await click('recall-run');
  const hit = await browser.$('[data-testid=recall-hit][data-name=Headache]');
  await hit.waitForExist({ timeout: 15_000 });
  assert.match(await (await hit.$('[data-testid=recall-parts]')).getText(), /\d\.\d{3}/);
  await shot('desk-31-recall');
});

test('31 §7 §4. in the window: the read log lists an agent’s reads, recall heat says who read what; an overwritten value is a contradiction', async () => {
  const drugs = 'FIND(?d) WHERE { ?d {type: "Drug"} }';
  // The agent's read: what it returned is what the heat marks.
  const ids = JSON.parse(kip('--originator', 'agent-x', 'exec', drugs)).result.map((d) => d.id);
  await click('nav-trace');
  await click('trace-tab-reads');
  const agent = await browser.$('[data-testid=read-log-originator][data-originator=agent-x]');
  await agent.waitForExist({ timeout: 15_000 });
  const aspirin = await withText('[data-testid=read-log-originator][data-originator=agent-x] [data-testid=read-id]', 'Aspirin', 15_000);
  await shot('desk-31-read-log');
  await aspirin.click();
  await withText('[data-testid=inspector-name]', 'Aspirin', 15_000);

  await click('nav-graph');
  await only('Aspirin', 'Ibuprofen');
  await click('recall-heat');
  await withText('[data-testid=recall-heat-summary]', 'read', 15_000);
  await browser.waitUntil(async () => {
    const hot = (await nodes()).find((n) => ids.includes(n.id));
    return hot && /read \d+× by .*agent-x/.test((await style(hot.id)).label);
  }, { timeout: 15_000, timeoutMsg: 'no read concept is labelled with its reads' });
  await shot('desk-31-recall-heat');
  await click('recall-heat');

  kip('exec', 'UPSERT { CONCEPT ?p { {type: "Person", name: "Ann"} SET ATTRIBUTES { birthplace: "Oslo" } } } WITH METADATA { source: "chat:1" }');
  kip('exec', 'UPSERT { CONCEPT ?p { {type: "Person", name: "Ann"} SET ATTRIBUTES { birthplace: "Bergen" } } } WITH METADATA { source: "doc:7" }');
  await click('nav-health');
  await click('health-open-contradictions');
  const side = await browser.$('[data-testid=contradiction][data-kind=attribute][data-subject="Ann"] [data-testid=contradiction-side][data-object="Oslo"]');
  await side.waitForExist({ timeout: 15_000 });
  assert.match(await side.getText(), /chat:1/);
  await shot('desk-31-attribute-contradiction');
});

test('33. in the window: the scene as a table selects its element; the context menu from the keyboard pins a node', async () => {
  await only('Aspirin', 'Ibuprofen');
  await click('scene-table-toggle');
  const row = await withText('[data-testid=scene-table-row]', 'Ibuprofen', 15_000);
  assert.equal((await browser.$$('[data-testid=scene-table-row]')).length, (await nodes()).filter((n) => !n.hidden).length);
  await shot('desk-33-scene-table');
  // WebKit's driver will not click a table row: its name cell, as a person does.
  await (await row.$('td*=Ibuprofen')).click();
  await withText('[data-testid=inspector-name]', 'Ibuprofen', 15_000);
  await click('scene-table-close');
  // The inspector opened beside the graph and narrowed it: fit the view again, as a person would.
  await settled();
  await graphKey('f');
  await pause(800);

  const aspirin = await nodeByLabel('Aspirin');
  await clickNode(aspirin.id);
  await pause(600);
  await graphKey(SHIFT, '\uE03A', '\uE000'); // Shift+F10, then release Shift
  const menu = await byId('graph-context-menu');
  await menu.waitForExist({ timeout: 15_000 });
  await shot('desk-33-context-menu');
  await (await menu.$('button*=Pin')).click();
  await browser.waitUntil(async () => (await nodes()).find((n) => n.id === aspirin.id)?.pinned, { timeout: 15_000, timeoutMsg: 'Aspirin was not pinned' });
  await menu.waitForExist({ reverse: true, timeout: 15_000 });
});
