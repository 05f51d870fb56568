// The curator's desk (issue 15, "Add" 7–12), each seen in a screenshot:
// styling rules kept with the nexus, saved queries, exports (PNG, SVG, CSV,
// clipboard, scenes), multiple selection with undo/redo, paths between two
// concepts from the engine, and the time window.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, startBrowser, openPage, shot, settled, clickNode, nodeByLabel, kip, downloaded, dismissToasts, onlyDrugs } from './harness.mjs';

let server;
let browser;
let page;
let pageErrors;

before(async () => {
  server = await startServer();
  browser = await startBrowser();
  ({ page, pageErrors } = await openPage(browser, server.url));
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
  await page.waitForFunction(() => window.kipExplorer?.firstGraphPaintMs !== undefined, null, { timeout: 20_000 });
  await settled(page);
});

after(async () => {
  await browser?.close();
  server?.stop();
});

/** A kip-api operation through `kip serve`, as the page calls it. */
async function apiCall(operation, body) {
  return page.evaluate(
    async ([op, b]) => (await fetch(`/api/${op}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(b) })).json(),
    [operation, body],
  );
}

async function write(text) {
  await page.locator('.cm-content').click();
  await page.keyboard.press('Control+a');
  await page.keyboard.insertText(text);
}

/** Whether the node is drawn on the canvas, not under a panel or a notice. */
async function onCanvas(id) {
  const pos = await page.evaluate((n) => window.kipExplorer.nodePosition(n), id);
  const box = await page.getByTestId('graph-canvas').boundingBox();
  return page.evaluate(([x, y]) => document.elementFromPoint(x, y)?.tagName === 'CANVAS', [box.x + pos.x, box.y + pos.y]);
}

async function shiftClick(id) {
  assert.ok(await onCanvas(id), `${id} is drawn under another element`);
  const pos = await page.evaluate((n) => window.kipExplorer.nodePosition(n), id);
  const box = await page.getByTestId('graph-canvas').boundingBox();
  await page.keyboard.down('Shift');
  await page.mouse.click(box.x + pos.x, box.y + pos.y);
  await page.keyboard.up('Shift');
  await page.waitForTimeout(150);
}

const style = (id) => page.evaluate((n) => window.kipExplorer.nodeStyle(n), id);

test('7. styling rules: size by risk_level, colour by confidence, a type colour — kept with the nexus', async () => {
  for (const type of ['Symptom', 'Drug']) {
    await page.getByTestId('nav-primer').click();
    await page.locator(`[data-testid=primer-domain][data-domain=Medical] [data-testid=primer-type][data-type=${type}]`).click();
    await page.waitForFunction((t) => window.kipExplorer.graphNodes().filter((n) => n.type === t).length >= 3, type);
    // The app shows the graph once the links are in too (see curator test 2).
    await page.locator('[data-testid=nav-graph][aria-current=page]').waitFor();
  }
  await page.waitForFunction(() => window.kipExplorer.graphEdges().some((e) => e.predicate === 'treats'));
  await page.getByTestId('nav-graph').click();
  await settled(page);
  const stats = page.getByTestId('graph-stats');
  if ((await stats.getAttribute('aria-expanded')) !== 'true') await stats.click();

  // Size by risk_level (a scale over the values shown).
  await page.getByTestId('style-add').click();
  await page.getByTestId('rule-on').selectOption('property');
  await page.getByTestId('rule-name').selectOption('risk_level');
  await page.getByTestId('rule-match').selectOption('scale');
  await page.getByTestId('rule-scale').selectOption('size');
  await page.getByTestId('rule-add').click();
  // Colour the links by their confidence (metadata), from 0 to 1.
  await page.getByTestId('style-add').click();
  await page.getByTestId('rule-on').selectOption('property');
  await page.getByTestId('rule-only').selectOption('links');
  await page.getByTestId('rule-name').selectOption('confidence');
  await page.getByTestId('rule-match').selectOption('scale');
  await page.getByTestId('rule-min').fill('0');
  await page.getByTestId('rule-max').fill('1');
  await page.getByTestId('rule-scale').selectOption('color');
  await page.getByTestId('rule-add').click();
  // Symptoms in one colour, captioned by their description.
  await page.getByTestId('style-add').click();
  await page.getByTestId('rule-on').selectOption('type');
  await page.getByTestId('rule-name').selectOption('Symptom');
  await page.getByTestId('rule-color').fill('#1c7ed6');
  await page.getByTestId('rule-add').click();
  assert.equal(await page.getByTestId('style-rule').count(), 3);

  const aspirin = await nodeByLabel(page, 'Aspirin'); // risk 2
  const mefenamic = await nodeByLabel(page, 'Mefenamic'); // risk 4
  const paracetamol = await nodeByLabel(page, 'Paracetamol'); // risk 1
  assert.ok((await style(mefenamic.id)).size > (await style(aspirin.id)).size, 'higher risk, bigger node');
  assert.ok((await style(aspirin.id)).size > (await style(paracetamol.id)).size);
  const symptom = await page.evaluate(() => window.kipExplorer.graphNodes().find((n) => n.type === 'Symptom'));
  assert.equal((await style(symptom.id)).color, '#1c7ed6');
  // Aspirin treats Fever with confidence 0.9: coloured along the scale; links without one keep the default grey.
  const colours = await page.evaluate(() => window.kipExplorer.graphEdges().filter((e) => e.predicate === 'treats').map((e) => window.kipExplorer.edgeStyle(e.id).color));
  assert.ok(colours.some((c) => c !== '#9aa3b5'), colours.join());
  // Concepts carry a confidence too, but the rule is for links only.
  assert.notEqual((await style(aspirin.id)).color, (await page.evaluate((e) => window.kipExplorer.edgeStyle(e).color, (await page.evaluate(() => window.kipExplorer.graphEdges().find((e) => e.predicate === 'treats'))).id)));
  await page.keyboard.press('f');
  await page.waitForTimeout(400);
  await shot(page, 'desk-7-styling-rules');

  // Kept with the nexus: the engine's settings hold them, and a new page draws with them.
  const stored = await apiCall('settings_get', { prefix: 'ui.styles' });
  assert.equal(stored.values['ui.styles'].length, 3);
  await page.reload();
  await page.waitForFunction(() => window.kipExplorer?.firstGraphPaintMs !== undefined, null, { timeout: 20_000 });
  await settled(page);
  if ((await page.getByTestId('graph-stats').getAttribute('aria-expanded')) !== 'true') await page.getByTestId('graph-stats').click();
  assert.equal(await page.getByTestId('style-rule').count(), 3);
  const again = await nodeByLabel(page, 'Mefenamic');
  if (again) assert.ok((await style(again.id)).size > 15, 'the scale applies after a reload');
  // Remove the rules again for the tests that follow.
  for (let i = 0; i < 3; i++) await page.getByTestId('style-rule').first().getByRole('button').click();
  assert.equal(await page.getByTestId('style-rule').count(), 0);
});

test('8. saved queries: named, described, parameterised, run from the list, exported as .kip', async () => {
  await page.getByTestId('nav-console').click();
  await write('FIND(?d.name) WHERE {\n  ?d {type: :type}\n}\nORDER BY ?d.name');
  await page.locator('.side').getByRole('tab', { name: /Parameters/ }).click();
  await page.locator('.params input').first().waitFor();
  await page.locator('.params input').first().fill('"Drug"');
  await page.getByTestId('tab-saved').click();
  await page.getByTestId('save-query').click();
  await page.getByTestId('save-name').fill('Drugs by name');
  await page.getByTestId('save-description').fill('Every drug, alphabetically; :type picks another type.');
  await page.getByTestId('save-confirm').click();
  await page.getByTestId('saved-query').filter({ hasText: 'Drugs by name' }).waitFor();
  // Ctrl+S in the editor saves too (issue 33 §13): the name field takes the keyboard.
  await write('FIND(?h.name) WHERE { ?h {type: "Herb"} }');
  await page.locator('.side').getByRole('tab', { name: /History/ }).click();
  await page.getByTestId('kip-editor').press('Control+s');
  await page.waitForFunction(() => document.activeElement?.getAttribute('data-testid') === 'save-name');
  await page.keyboard.type('Herbs');
  await page.keyboard.press('Enter');
  await page.getByTestId('saved-query').filter({ hasText: 'Herbs' }).waitFor();

  // Another text in the editor; the saved one runs from the list with its parameter.
  await write('FIND(?s) WHERE { ?s {type: "Symptom"} }');
  await page.reload();
  await page.getByTestId('nav-console').click();
  await page.getByTestId('tab-saved').click();
  const entry = page.getByTestId('saved-query').filter({ hasText: 'Drugs by name' });
  await entry.waitFor();
  await entry.getByTestId('saved-run').click();
  await page.getByTestId('result-meta').filter({ hasText: /rows/ }).waitFor();
  const names = await page.locator('[data-testid=result] tbody tr td:nth-child(2)').allInnerTexts();
  const expected = JSON.parse(kip(server.db, 'exec', 'FIND(?d.name) WHERE { ?d {type: "Drug"} } ORDER BY ?d.name')).result;
  assert.deepEqual(names, expected);
  await shot(page, 'desk-8-saved-queries');

  const file = await downloaded(page, () => page.getByTestId('export-queries').click());
  assert.equal(file.name, 'saved-queries.kip');
  const text = file.bytes.toString('utf8');
  assert.match(text, /\/\/ @query Drugs by name\n\/\/ @description Every drug, alphabetically; :type picks another type.\n\/\/ @param :type = "Drug"\nFIND\(\?d\.name\)/);
  // The exported file is KIP the engine accepts.
  const check = await apiCall('validate', { text });
  assert.equal(check.ok, true, JSON.stringify(check.diagnostics));
});

test('9. exports: the table as CSV and to the clipboard; the graph as SVG and PNG; a scene that reopens', async () => {
  // The saved query's result table is still shown.
  const csv = await downloaded(page, () => page.getByTestId('export-csv').click());
  assert.equal(csv.name, 'kip-result.csv');
  const lines = csv.bytes.toString('utf8').trim().split('\r\n');
  assert.equal(lines[0], '?d.name');
  assert.ok(lines.includes('Aspirin') && lines.includes('Ibuprofen'), lines.join('|'));
  await page.getByTestId('copy-table').click();
  const clip = await page.evaluate(() => navigator.clipboard.readText());
  assert.equal(clip.split('\n').length, lines.length);

  await onlyDrugs(page, 'Aspirin', 'Ibuprofen');
  const svg = await downloaded(page, async () => {
    await page.getByTestId('export-menu').click();
    await page.getByTestId('export-svg').click();
  });
  const svgText = svg.bytes.toString('utf8');
  assert.match(svgText, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  assert.match(svgText, />[^<]*Aspirin<\/text>/);
  assert.match(svgText, />[^<]*Ibuprofen<\/text>/);
  const png = await downloaded(page, async () => {
    await page.getByTestId('export-menu').click();
    await page.getByTestId('export-png').click();
  });
  assert.match(png.name, /^kip-graph-[\p{L}\p{N}-]+-\d{8}-\d{4}\.png$/u);
  assert.deepEqual([...png.bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

  // A scene: these nodes where they are, pinned; cleared; reopened in place.
  const aspirin = await nodeByLabel(page, 'Aspirin');
  await dismissToasts(page);
  await clickNode(page, aspirin.id);
  await page.keyboard.press('p');
  const before = await page.evaluate(() => window.kipExplorer.graphNodes().map((n) => ({ id: n.id, pinned: n.pinned })).sort((a, b) => a.id.localeCompare(b.id)));
  await page.getByTestId('export-menu').click();
  await page.getByTestId('scene-name').fill('Two NSAIDs');
  await page.getByTestId('scene-save').click();
  await page.getByRole('button', { name: 'Clear', exact: true }).click();
  await page.waitForFunction(() => window.kipExplorer.graphNodes().length === 0);
  await page.getByTestId('export-menu').click();
  await page.getByTestId('scene').filter({ hasText: 'Two NSAIDs' }).getByRole('button').first().click();
  await page.waitForFunction((n) => window.kipExplorer.graphNodes().length === n, before.length);
  const after = await page.evaluate(() => window.kipExplorer.graphNodes().map((n) => ({ id: n.id, pinned: n.pinned })).sort((a, b) => a.id.localeCompare(b.id)));
  assert.deepEqual(after, before);
  await page.waitForTimeout(400);
  await shot(page, 'desk-9-scene-reopened');
});

test('10. shift-click and lasso select several; hide, pin and remove them at once; undo and redo every step', async () => {
  await page.getByTestId('nav-primer').click();
  await page.locator('[data-testid=primer-domain][data-domain=Medical] [data-testid=primer-type][data-type=Drug]').click();
  await page.waitForFunction(() => window.kipExplorer.graphNodes().length >= 5);
  await page.getByTestId('nav-graph').click();
  await settled(page);
  await page.locator('.graph-view').focus();
  await page.keyboard.press('f');
  await page.waitForTimeout(400);
  await page.keyboard.press('Escape'); // nothing selected: shift-click starts a new selection
  await page.waitForTimeout(600);
  const all = await page.evaluate(() => window.kipExplorer.graphNodes().filter((n) => !n.hidden));
  const total = all.length;
  // Two nodes drawn where nothing covers them (shift-click needs the canvas).
  const nodes = [];
  for (const n of all) if (await onCanvas(n.id)) nodes.push(n);
  assert.ok(nodes.length >= 2);
  await shiftClick(nodes[0].id);
  await shiftClick(nodes[1].id);
  assert.deepEqual(await page.evaluate(() => window.kipExplorer.selection()), [nodes[0].id, nodes[1].id]);
  assert.equal(await page.getByTestId('selection-count').innerText(), '2 selected');

  // A lasso around the whole canvas (clear of the panels) takes in the rest.
  const box = await page.getByTestId('graph-canvas').boundingBox();
  const o = await page.evaluate(() => window.kipExplorer.overlays());
  const x0 = box.x + Math.max(o.legend.x + o.legend.w, 0) + 4;
  const y0 = box.y + o.toolbar.y + o.toolbar.h + 4;
  await page.keyboard.down('Shift');
  await page.mouse.move(x0, y0);
  await page.mouse.down();
  for (const [x, y] of [[box.x + box.width - 4, y0], [box.x + box.width - 4, box.y + box.height - 4], [x0, box.y + box.height - 4], [x0, y0 + 2]]) await page.mouse.move(x, y, { steps: 6 });
  await shot(page, 'desk-10a-lasso');
  await page.mouse.up();
  await page.keyboard.up('Shift');
  const drawn = await page.evaluate(() => window.kipExplorer.graphNodes().filter((n) => { const p = window.kipExplorer.nodePosition(n.id); return p; }));
  const selected = await page.evaluate(() => window.kipExplorer.selection());
  assert.ok(selected.length > 2, `the lasso added nodes: ${selected.length} of ${drawn.length}`);
  await shot(page, 'desk-10b-selected');

  // Hide the selection: one action, undone and redone as one.
  await page.getByRole('toolbar', { name: 'Graph tools' }).getByRole('button', { name: 'Hide', exact: true }).click();
  const visible = () => page.evaluate(() => window.kipExplorer.graphNodes().filter((n) => !n.hidden).length);
  assert.equal(await visible(), total - selected.length);
  await page.locator('.graph-view').focus();
  await page.keyboard.press('Control+z');
  assert.equal(await visible(), total);
  await page.keyboard.press('Control+Shift+z');
  assert.equal(await visible(), total - selected.length);
  await page.keyboard.press('Control+z');

  // Pin two at once, then remove them at once; undo brings them back pinned.
  await shiftClick(nodes[0].id);
  await shiftClick(nodes[1].id);
  const pinned = () => page.evaluate((ids) => window.kipExplorer.graphNodes().filter((n) => ids.includes(n.id) && n.pinned).length, [nodes[0].id, nodes[1].id]);
  const pinnedBefore = await pinned();
  await page.keyboard.press('p');
  assert.equal(await pinned(), 2);
  await page.keyboard.press('Delete');
  assert.equal(await page.evaluate(() => window.kipExplorer.graphNodes().length), total - 2);
  await page.getByTestId('undo').click();
  assert.equal(await page.evaluate(() => window.kipExplorer.graphNodes().length), total);
  assert.equal(await pinned(), 2);
  await page.getByTestId('undo').click();
  assert.equal(await pinned(), pinnedBefore);
  await shot(page, 'desk-10c-undone');
});

test('11. find paths between two selected concepts: the engine’s shortest paths, drawn', async () => {
  await onlyDrugs(page, 'Aspirin', 'Ibuprofen');
  const aspirin = await nodeByLabel(page, 'Aspirin');
  const ibuprofen = await nodeByLabel(page, 'Ibuprofen');
  await shiftClick(aspirin.id);
  await shiftClick(ibuprofen.id);
  await page.getByTestId('find-paths').click();
  await page.getByTestId('paths-hops').fill('3');
  await page.getByTestId('paths-run').click();
  await page.waitForFunction(() => window.kipExplorer.pathLinks().length > 0);
  const engine = await apiCall('paths', { from: { id: aspirin.id }, to: { id: ibuprofen.id }, max_hops: 3 });
  assert.equal(engine.hops, 2);
  // The view keeps out of the domain hub (issue 33 §7): the engine's paths but those through belongs_to_domain.
  const predicateOf = new Map(engine.elements.map((e) => [e.id, e.predicate]));
  const outsideDomains = engine.paths.filter((p) => p.links.every((l) => predicateOf.get(l) !== 'belongs_to_domain'));
  assert.ok(outsideDomains.length > 0 && outsideDomains.length < engine.paths.length);
  const drawnLinks = (await page.evaluate(() => window.kipExplorer.pathLinks())).sort();
  assert.deepEqual(drawnLinks, [...new Set(outsideDomains.flatMap((p) => p.links))].sort());
  const ids = new Set(await page.evaluate(() => window.kipExplorer.graphNodes().map((n) => n.id)));
  for (const p of outsideDomains) for (const n of p.nodes) assert.ok(ids.has(n), `${n} is drawn`);
  assert.ok(await nodeByLabel(page, 'NSAID'), 'the shared class is on a path');
  await settled(page);
  await page.keyboard.press('f');
  await page.waitForTimeout(400);
  await shot(page, 'desk-11a-paths');

  // Restricted to one predicate: only the paths over it.
  await page.getByTestId('find-paths').click();
  await page.getByTestId('paths-predicates').selectOption(['is_class_of']);
  await page.getByTestId('paths-run').click();
  await page.waitForFunction((n) => window.kipExplorer.pathLinks().length !== n, drawnLinks.length);
  const classOnly = await page.evaluate(() => window.kipExplorer.pathLinks().map((id) => window.kipExplorer.graphEdges().find((e) => e.id === id)?.predicate));
  assert.deepEqual([...new Set(classOnly)], ['is_class_of']);
  await shot(page, 'desk-11b-paths-one-predicate');
});

test('12. time: a range slider over _updated_at hides what is outside; "what changed since" rings recent elements', async () => {
  await page.locator('.graph-view').focus();
  await page.keyboard.press('Escape');
  await onlyDrugs(page, 'Aspirin', 'Ibuprofen', 'Paracetamol');
  // A write a moment later: Ibuprofen is the newest element.
  await page.waitForTimeout(1100);
  kip(server.db, 'exec', 'UPSERT { CONCEPT ?d { {type: "Drug", name: "Ibuprofen"} SET ATTRIBUTES { note: "checked" } } }');
  const ibuprofen = await nodeByLabel(page, 'Ibuprofen');
  await page.waitForFunction(() => document.querySelector('[data-testid=time-from]'), null, { timeout: 10_000 });
  const stats = page.getByTestId('graph-stats');
  if ((await stats.getAttribute('aria-expanded')) !== 'true') await stats.click();
  const slider = page.getByTestId('time-from');
  await slider.waitFor();
  const max = await slider.getAttribute('max');
  await slider.fill(max);
  await page.waitForFunction((id) => window.kipExplorer.graphNodes().filter((n) => !n.hidden).map((n) => n.id).join() === id, ibuprofen.id);
  await shot(page, 'desk-12a-time-window');
  await slider.fill('0');
  await page.waitForFunction(() => window.kipExplorer.graphNodes().every((n) => !n.hidden));

  await page.getByTestId('changed-since').selectOption('10m');
  const marked = await page.evaluate(() => window.kipExplorer.markedNodes());
  assert.ok(marked.includes(ibuprofen.id), 'the fresh write is marked');
  await shot(page, 'desk-12b-changed-since');
  // Its toast covers neither the inspector, the legend nor the hint line (issue 33 §13).
  const toast = page.locator('.toast').filter({ hasText: 'changed since' }).first();
  await toast.waitFor();
  const box = await toast.boundingBox();
  for (const other of ['[data-testid=inspector]', '.legend', '.hint']) {
    const b = await page.locator(other).first().boundingBox().catch(() => null);
    if (!b) continue;
    const overlaps = box.x < b.x + b.width && b.x < box.x + box.width && box.y < b.y + b.height && b.y < box.y + box.height;
    assert.ok(!overlaps, `the toast covers ${other}`);
  }
  // Limited to one originator (issue 33 §2): what the trace's writes by `cli` since then touched.
  await page.getByTestId('changed-by').selectOption('cli');
  await page.waitForFunction((id) => window.kipExplorer.markedNodes().includes(id), ibuprofen.id);
  await page.locator('.toast').filter({ hasText: 'changed by cli since' }).first().waitFor();
  // Clearing the marks clears the choice too: the select no longer claims them.
  await page.getByTestId('clear-marks').click();
  assert.equal(await page.getByTestId('changed-since').inputValue(), '');
  assert.deepEqual(pageErrors, []);
});
