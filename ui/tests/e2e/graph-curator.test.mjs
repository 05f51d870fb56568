// The graph as a curator uses it (issue 33 §6, §7, §10 and the Bloom /
// Memgraph Lab features it lists), each seen in a screenshot: the whole
// graph exported legibly with a title and legend, the view's data as CSV
// and JSON; expansion that closes its picker and places neighbours beside
// the node; console results highlighted or drawn afresh; paths that keep
// out of domain hubs and are framed; a context menu from the mouse and the
// keyboard; a filter by property value; gradient palettes with a scale
// legend; a choice of layouts; and the workspace kept across a reload.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, startBrowser, openPage, shot, settled, clickNode, nodeByLabel, kip, screenshots, downloaded, dismissToasts, onlyDrugs } from './harness.mjs';

let server;
let browser;
let page;
let pageErrors;

before(async () => {
  server = await startServer();
  // A memory's metadata: a doubtful, expired drug and a doubtful one.
  kip(server.db, 'exec', 'UPSERT { CONCEPT ?d { {type: "Drug", name: "Aspirin"} } } WITH METADATA { confidence: 0.3, expires_at: "2020-01-01T00:00:00Z" }');
  kip(server.db, 'exec', 'UPSERT { CONCEPT ?d { {type: "Drug", name: "Paracetamol"} } } WITH METADATA { confidence: 0.4 }');
  kip(server.db, 'exec', 'UPSERT { CONCEPT ?d { {type: "Drug", name: "Ibuprofen"} } } WITH METADATA { confidence: 0.8 }');
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

async function openLegend() {
  const stats = page.getByTestId('graph-stats');
  if ((await stats.getAttribute('aria-expanded')) !== 'true') await stats.click();
}

/** The Medical drugs, symptoms and classes, with their links. */
async function medical() {
  // Drugs last: a type's instances come with their links to what is shown.
  for (const type of ['Symptom', 'DrugClass', 'Drug']) {
    await page.getByTestId('nav-primer').click();
    await page.locator(`[data-testid=primer-domain][data-domain=Medical] [data-testid=primer-type][data-type=${type}]`).click();
    await page.waitForFunction((t) => window.kipExplorer.graphNodes().filter((n) => n.type === t).length >= 2, type);
    await page.locator('[data-testid=nav-graph][aria-current=page]').waitFor();
  }
  // The links among them come in after the concepts.
  await page.waitForFunction(() => ['treats', 'is_class_of'].every((p) => window.kipExplorer.graphEdges().some((e) => e.predicate === p)));
  await settled(page);
  await dismissToasts(page);
}

const visibleNodes = () => page.evaluate(() => window.kipExplorer.graphNodes().filter((n) => !n.hidden));

test('§6 export: the whole graph as a titled PNG with a legend and unpiled labels; the view as CSV and JSON', async () => {
  await page.getByRole('button', { name: 'Clear', exact: true }).click();
  await medical();
  // Zoomed in: the viewport shows a crop; the export must not.
  await page.locator('.graph-view').focus();
  for (let i = 0; i < 4; i++) await page.keyboard.press('+');
  await page.waitForTimeout(400);
  const shown = await visibleNodes();
  const svg = await page.evaluate(() => window.kipExplorer.svg());
  // Every shown node is drawn, inside the picture.
  const geometry = await page.evaluate((text) => {
    const host = document.createElement('div');
    host.innerHTML = text;
    document.body.appendChild(host);
    const root = host.querySelector('svg');
    const w = Number(root.getAttribute('width'));
    const h = Number(root.getAttribute('height'));
    const nodes = [...root.querySelectorAll('g.nodes circle, g.nodes polygon')].map((c) => c.getBBox());
    const labels = [...root.querySelectorAll('g.labels text')].map((t) => t.getBBox());
    const title = root.querySelector('text.title')?.textContent;
    const subtitle = root.querySelector('text.subtitle')?.textContent;
    const legend = root.querySelector('g.legend')?.textContent ?? '';
    host.remove();
    return { w, h, nodes, labels: labels.map((b) => ({ x: b.x, y: b.y, w: b.width, h: b.height })), title, subtitle, legend, inside: nodes.every((b) => b.x >= 0 && b.y >= 0 && b.x + b.width <= w && b.y + b.height <= h) };
  }, svg);
  assert.equal(geometry.nodes.length, shown.length, 'every shown node is in the picture');
  assert.ok(geometry.inside, 'no node is cropped');
  // Labels do not pile up: no two boxes overlap (a pixel of leeway for glyph overhang).
  for (let i = 0; i < geometry.labels.length; i++)
    for (let j = i + 1; j < geometry.labels.length; j++) {
      const a = geometry.labels[i];
      const b = geometry.labels[j];
      const overlap = a.x + 1 < b.x + b.w && b.x + 1 < a.x + a.w && a.y + 1 < b.y + b.h && b.y + 1 < a.y + a.h;
      assert.ok(!overlap, `labels ${i} and ${j} overlap`);
    }
  assert.ok(geometry.labels.length >= shown.length / 2, `most nodes are labelled: ${geometry.labels.length} of ${shown.length}`);
  assert.ok(geometry.title?.length > 0, 'a title');
  assert.match(geometry.subtitle, /\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} [A-Z][A-Za-z0-9+:-]*/, 'the time with its zone');
  for (const type of ['Drug', 'Symptom', 'DrugClass']) assert.match(geometry.legend, new RegExp(`${type} \\(\\d+\\)`), `the legend names ${type}`);

  await page.getByTestId('export-menu').click();
  const png = await downloaded(page, () => page.getByTestId('export-png').click());
  assert.match(png.name, /^kip-graph-[\p{L}\p{N}-]+-\d{8}-\d{4}\.png$/u);
  assert.deepEqual([...png.bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const width = png.bytes.readUInt32BE(16);
  const height = png.bytes.readUInt32BE(20);
  assert.ok(width >= geometry.w && height >= geometry.h, `the PNG holds the whole picture: ${width}×${height}`);
  writeFileSync(join(screenshots, 'graph-curator-1-export.png'), png.bytes);

  // The view's data.
  const concepts = shown.filter((n) => n.type !== 'proposition');
  const links = await page.evaluate(() => window.kipExplorer.graphEdges().filter((e) => !e.anchor));
  await page.getByTestId('export-menu').click();
  const csv = await downloaded(page, () => page.getByTestId('export-data-csv').click());
  assert.match(csv.name, /^kip-graph-.+-\d{8}-\d{4}\.csv$/);
  const lines = csv.bytes.toString('utf8').trim().split('\r\n');
  assert.match(lines[0], /^kind,id,type,name,subject,predicate,object,confidence,/);
  assert.equal(lines.filter((l) => l.startsWith('concept,')).length, concepts.length);
  assert.equal(lines.filter((l) => l.startsWith('link,')).length, links.length);
  assert.ok(lines.some((l) => /^concept,C:[^,]+,Drug,Aspirin,,,,0\.3,/.test(l)), 'Aspirin with its confidence');
  await page.getByTestId('export-menu').click();
  const json = await downloaded(page, () => page.getByTestId('export-data-json').click());
  const data = JSON.parse(json.bytes.toString('utf8'));
  assert.equal(data.concepts.length, concepts.length);
  assert.equal(data.links.length, links.length);
  assert.ok(data.links.every((l) => l.subject && l.predicate && l.object && l.id));
});

test('§7 expanding: the picker closes, the neighbours land around the node, the keyboard stays with the graph', async () => {
  await onlyDrugs(page, 'Aspirin', 'Ibuprofen', 'Paracetamol');
  const aspirin = await nodeByLabel(page, 'Aspirin');
  const before = new Set((await visibleNodes()).map((n) => n.id));
  // Selected first: the inspector opens beside the graph and the view settles before the double-click.
  await clickNode(page, aspirin.id);
  await page.waitForTimeout(600);
  await clickNode(page, aspirin.id, { double: true });
  await page.locator('.picker button.pred[data-predicate=treats][data-direction=outgoing]').click();
  await page.waitForFunction((n) => window.kipExplorer.graphNodes().length > n, before.size);
  await page.locator('.picker').waitFor({ state: 'detached' });
  assert.equal(await page.evaluate(() => document.activeElement?.classList.contains('graph-view')), true, 'focus is back on the graph');
  await settled(page);
  const nodes = await visibleNodes();
  const fresh = nodes.filter((n) => !before.has(n.id));
  assert.ok(fresh.length >= 2, 'treats brought symptoms');
  const a = nodes.find((n) => n.id === aspirin.id);
  const others = nodes.filter((n) => before.has(n.id) && n.id !== aspirin.id);
  for (const n of fresh) {
    const own = Math.hypot(n.x - a.x, n.y - a.y);
    for (const o of others) assert.ok(own < Math.hypot(n.x - o.x, n.y - o.y), `${n.label} lies nearer Aspirin than ${o.label}`);
  }
  // Not piled: the new neighbours' labels are all drawn.
  const labelled = new Set((await page.evaluate(() => window.kipExplorer.drawnLabels())).map((l) => l.id));
  for (const n of fresh) assert.ok(labelled.has(n.id), `${n.label} has its label`);
  await shot(page, 'graph-curator-2-expanded');
  // `e` opens the picker from the keyboard (the focus is the graph's).
  await page.keyboard.press('e');
  await page.locator('.picker').waitFor();
  await page.keyboard.press('Escape');
  await page.locator('.picker').waitFor({ state: 'detached' });
});

test('§7 console results: ringed in the graph, or drawn as a new graph', async () => {
  await onlyDrugs(page, 'Aspirin', 'Ibuprofen');
  await page.getByTestId('nav-console').click();
  await page.locator('.cm-content').click();
  await page.keyboard.press('Control+a');
  await page.keyboard.insertText('FIND(?s) WHERE { ?s {type: "Symptom"} }');
  await page.keyboard.press('Control+Enter');
  await page.getByTestId('result-meta').waitFor();
  const symptoms = JSON.parse(kip(server.db, 'exec', 'FIND(?s) WHERE { ?s {type: "Symptom"} }')).result.map((s) => s.id).sort();
  await page.getByTestId('to-graph').click();
  await page.waitForFunction((n) => window.kipExplorer.markedNodes().length === n, symptoms.length);
  assert.deepEqual((await page.evaluate(() => window.kipExplorer.markedNodes())).sort(), symptoms);
  assert.ok(await nodeByLabel(page, 'Aspirin'), 'added to what was there');
  await settled(page);
  await shot(page, 'graph-curator-3a-console-highlighted');

  await page.getByTestId('nav-console').click();
  await page.getByTestId('graph-mode').selectOption('fresh');
  await page.getByTestId('to-graph').click();
  await page.waitForFunction(() => !window.kipExplorer.graphNodes().some((n) => n.label.includes('Aspirin')));
  const types = new Set((await visibleNodes()).map((n) => n.type));
  assert.deepEqual([...types], ['Symptom']);
  await page.getByTestId('nav-console').click();
  await page.getByTestId('graph-mode').selectOption('highlight');
});

test('§7 find paths: not through the domain hub unless asked, and the path framed', async () => {
  await onlyDrugs(page, 'Aspirin', 'Ibuprofen');
  const aspirin = await nodeByLabel(page, 'Aspirin');
  const ibuprofen = await nodeByLabel(page, 'Ibuprofen');
  // The engine's shortest paths include the one through the Medical domain.
  const engine = JSON.parse(await page.evaluate(async ([a, b]) => JSON.stringify(await (await fetch('/api/paths', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ from: { id: a }, to: { id: b }, max_hops: 3 }) })).json()), [aspirin.id, ibuprofen.id]));
  const predicateOf = (id) => page.evaluate((l) => window.kipExplorer.graphEdges().find((e) => e.id === l)?.predicate, id);
  assert.ok(engine.paths.some((p) => p.nodes.length === 3), 'a two-link path exists');
  for (const id of [aspirin.id, ibuprofen.id]) {
    const pos = await page.evaluate((n) => window.kipExplorer.nodePosition(n), id);
    const box = await page.getByTestId('graph-canvas').boundingBox();
    await page.keyboard.down('Shift');
    await page.mouse.click(box.x + pos.x, box.y + pos.y);
    await page.keyboard.up('Shift');
  }
  await page.getByTestId('find-paths').click();
  await page.getByTestId('paths-hops').fill('3');
  await page.getByTestId('paths-run').click();
  await page.waitForFunction(() => window.kipExplorer.pathLinks().length > 0);
  const links = await page.evaluate(() => window.kipExplorer.pathLinks());
  for (const l of links) assert.notEqual(await predicateOf(l), 'belongs_to_domain');
  assert.ok(!(await page.evaluate(() => window.kipExplorer.markedNodes().some((id) => window.kipExplorer.graphNodes().find((n) => n.id === id)?.type === 'Domain'))), 'the domain is not on a path');
  await settled(page);
  await page.waitForTimeout(500);
  // Framed: every node of the path is on the canvas, clear of the panels.
  const box = await page.getByTestId('graph-canvas').boundingBox();
  for (const id of await page.evaluate(() => window.kipExplorer.markedNodes())) {
    const p = await page.evaluate((n) => window.kipExplorer.nodePosition(n), id);
    assert.ok(p.x > 0 && p.y > 0 && p.x < box.width && p.y < box.height, `${id} is in view`);
  }
  await shot(page, 'graph-curator-4-paths');
  // Through domains when asked.
  await page.getByTestId('find-paths').click();
  await page.getByTestId('paths-via-domains').check();
  await page.getByTestId('paths-run').click();
  await page.waitForFunction(async () => {
    const ids = window.kipExplorer.pathLinks();
    return ids.some((id) => window.kipExplorer.graphEdges().find((e) => e.id === id)?.predicate === 'belongs_to_domain');
  });
  await page.getByTestId('find-paths').click();
  await page.getByTestId('paths-via-domains').uncheck();
  await page.getByRole('button', { name: 'Cancel' }).click();
});

test('context menu: right-click a node or a link, or Shift+F10; Escape gives the keyboard back to the graph', async () => {
  await onlyDrugs(page, 'Aspirin', 'Ibuprofen');
  const aspirin = await nodeByLabel(page, 'Aspirin');
  const pos = await page.evaluate((n) => window.kipExplorer.nodePosition(n), aspirin.id);
  const box = await page.getByTestId('graph-canvas').boundingBox();
  await page.mouse.click(box.x + pos.x, box.y + pos.y, { button: 'right' });
  const menu = page.getByTestId('graph-context-menu');
  await menu.waitFor();
  const items = await menu.getByRole('menuitem').allInnerTexts();
  for (const want of ['Expand', 'Hide', 'Pin', 'Open in the inspector', 'Find paths from here', 'Copy the id', 'Query in the console']) assert.ok(items.some((i) => i.startsWith(want)), `${want} in ${items.join(' | ')}`);
  assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('role')), 'menuitem', 'the first item has the focus');
  await shot(page, 'graph-curator-5a-context-menu');
  await page.keyboard.press('Escape');
  await menu.waitFor({ state: 'detached' });
  assert.equal(await page.evaluate(() => document.activeElement?.classList.contains('graph-view')), true);

  // The keyboard: Shift+F10 on the selected node, arrows, Enter.
  await clickNode(page, aspirin.id);
  await page.waitForTimeout(600);
  await page.locator('.graph-view').focus();
  await page.keyboard.press('Shift+F10');
  await menu.waitFor();
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  assert.match(await page.evaluate(() => document.activeElement?.textContent), /^Pin/);
  await page.keyboard.press('Enter');
  await page.waitForFunction((n) => window.kipExplorer.graphNodes().find((x) => x.id === n)?.pinned, aspirin.id);
  assert.equal(await page.evaluate(() => document.activeElement?.classList.contains('graph-view')), true);
  // Copy the id.
  await page.keyboard.press('ContextMenu');
  await menu.getByRole('menuitem', { name: 'Copy the id' }).click();
  await page.waitForFunction((id) => navigator.clipboard.readText().then((t) => t === id), aspirin.id);

  // A link: its menu names the predicate and queries it in the console.
  await page.getByRole('button', { name: 'Clear', exact: true }).click();
  await medical();
  await page.locator('.graph-view').focus();
  await page.keyboard.press('Escape');
  await page.keyboard.press('f');
  await page.waitForTimeout(500);
  const edge = await page.evaluate(() => {
    const k = window.kipExplorer;
    // The longest treats link: its middle lies clear of nodes.
    let best = null;
    for (const e of k.graphEdges().filter((e) => e.predicate === 'treats')) {
      const p = k.nodePosition(e.source);
      const q = k.nodePosition(e.target);
      const len = Math.hypot(q.x - p.x, q.y - p.y);
      if (!best || len > best.len) best = { id: e.id, len, x: (p.x + q.x) / 2, y: (p.y + q.y) / 2 };
    }
    return best;
  });
  const b2 = await page.getByTestId('graph-canvas').boundingBox();
  await page.mouse.click(b2.x + edge.x, b2.y + edge.y, { button: 'right' });
  await menu.waitFor();
  assert.equal(await menu.locator('.title').innerText(), 'treats');
  await menu.getByRole('menuitem', { name: 'Query in the console' }).click();
  await page.locator('[data-testid=nav-console][aria-current=page]').waitFor();
  assert.match(await page.locator('.cm-content').innerText(), new RegExp(edge.id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  await page.getByTestId('nav-graph').click();
});

test('filter by property value: keys offered from the scene; the rest dimmed or hidden, counted', async () => {
  await onlyDrugs(page, 'Aspirin', 'Ibuprofen', 'Paracetamol');
  await openLegend();
  await page.getByTestId('filter-add').click();
  const keys = await page.getByTestId('filter-key').locator('option').allInnerTexts();
  for (const k of ['confidence', 'expires_at', 'risk_level', 'name']) assert.ok(keys.includes(k), `${k} offered: ${keys.join(', ')}`);
  await page.getByTestId('filter-key').selectOption('confidence');
  await page.getByTestId('filter-op').selectOption('<');
  await page.getByTestId('filter-value').fill('0.5');
  const ibuprofen = await nodeByLabel(page, 'Ibuprofen');
  await page.waitForFunction((id) => window.kipExplorer.filteredOut().includes(id), ibuprofen.id);
  assert.deepEqual(await page.evaluate(() => window.kipExplorer.filteredOut()), [ibuprofen.id]);
  assert.equal(await page.getByTestId('filter-count').innerText(), 'confidence < 0.5: 1 of 3 dimmed');
  assert.equal((await visibleNodes()).length, 3, 'dimmed, not hidden');
  await shot(page, 'graph-curator-6a-filter-dimmed');
  await page.getByTestId('filter-mode').selectOption('hide');
  await page.waitForFunction((id) => window.kipExplorer.graphNodes().find((n) => n.id === id)?.hidden, ibuprofen.id);
  assert.equal(await page.getByTestId('filter-count').innerText(), 'confidence < 0.5: 1 of 3 hidden');
  // Expired: only Aspirin's expires_at has passed.
  await page.getByTestId('filter-op').selectOption('expired');
  await page.waitForFunction(() => window.kipExplorer.graphNodes().filter((n) => !n.hidden).length === 1);
  assert.match((await visibleNodes())[0].label, /Aspirin/);
  await shot(page, 'graph-curator-6b-filter-expired');
  // Equality on a key.
  await page.getByTestId('filter-op').selectOption('=');
  await page.getByTestId('filter-key').selectOption('risk_level');
  await page.getByTestId('filter-value').fill('3');
  await page.waitForFunction(() => window.kipExplorer.graphNodes().filter((n) => !n.hidden).length === 1);
  assert.match((await visibleNodes())[0].label, /Ibuprofen/);
  await page.getByTestId('filter-clear').click();
  await page.waitForFunction(() => window.kipExplorer.graphNodes().every((n) => !n.hidden));
});

test('§10 styling: a perceptual palette with a scale legend; the type legend shows the colours drawn; the key from a list', async () => {
  await onlyDrugs(page, 'Aspirin', 'Ibuprofen', 'Paracetamol');
  await openLegend();
  await page.getByTestId('style-add').click();
  await page.getByTestId('rule-on').selectOption('property');
  await page.getByTestId('rule-only').selectOption('nodes');
  const keys = await page.getByTestId('rule-name').locator('option').allInnerTexts();
  assert.ok(keys.includes('risk_level') && keys.includes('confidence'), keys.join(', '));
  await page.getByTestId('rule-name').selectOption('confidence');
  await page.getByTestId('rule-match').selectOption('scale');
  await page.getByTestId('rule-scale').selectOption('color');
  assert.equal(await page.getByTestId('rule-palette').inputValue(), 'viridis');
  await page.getByTestId('rule-add').click();
  // The scale legend: the values' ends.
  await page.getByTestId('scale-legend').waitFor();
  assert.equal(await page.getByTestId('scale-min').innerText(), '0.3');
  assert.equal(await page.getByTestId('scale-max').innerText(), '0.8');
  // Multi-hue: the lowest and highest differ in hue, not only in lightness.
  const colours = await page.evaluate(() => Object.fromEntries(window.kipExplorer.graphNodes().map((n) => [n.label.replace(/^\S+ /, ''), n.color])));
  const hue = (hex) => {
    const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255);
    const max = Math.max(r, g, b);
    const min = Math.min(r, g, b);
    const d = max - min || 1;
    const h = max === r ? ((g - b) / d) % 6 : max === g ? (b - r) / d + 2 : (r - g) / d + 4;
    return (h * 60 + 360) % 360;
  };
  const low = colours.Aspirin;
  const high = colours.Ibuprofen;
  assert.ok(low && high && low !== high, JSON.stringify(colours));
  assert.ok(Math.abs(hue(low) - hue(high)) > 60, `hues apart: ${low} ${high}`);
  // The type legend's swatch carries the colours the Drug nodes have.
  const swatch = await page.locator('[data-testid=type-swatch][data-type=Drug]').getAttribute('data-colors');
  assert.deepEqual(swatch.split(' ').sort(), Object.values(colours).sort());
  // The rule's description is not cut off.
  const desc = page.getByTestId('style-rule').locator('.desc');
  assert.ok(await desc.evaluate((el) => el.scrollWidth <= el.clientWidth + 1), 'the rule chip shows its whole text');
  await shot(page, 'graph-curator-7-palette');
  await page.getByTestId('style-rule').first().getByRole('button').click();
});

test('the scene as a table: what the graph shows, sortable, narrowed, a row selects its element', async () => {
  await onlyDrugs(page, 'Aspirin', 'Paracetamol', 'Ibuprofen');
  // Three concepts found one by one: a small scene stays whole in view as each arrives.
  await page.waitForTimeout(500);
  const box = await page.getByTestId('graph-canvas').boundingBox();
  for (const n of await page.evaluate(() => window.kipExplorer.graphNodes())) {
    const p = await page.evaluate((id) => window.kipExplorer.nodePosition(id), n.id);
    assert.ok(p.x > 0 && p.y > 0 && p.x < box.width && p.y < box.height, `${n.label} is in view`);
  }
  await page.getByTestId('scene-table-toggle').click();
  const table = page.getByTestId('scene-table');
  await table.waitFor();
  const rows = table.getByTestId('scene-table-row');
  const shown = await page.evaluate(() => window.kipExplorer.graphNodes().filter((n) => !n.hidden).length);
  assert.equal(await rows.count(), shown, 'one row per shown element');
  // Sorted by name, then the other way round.
  const names = async () => (await rows.locator('td:nth-child(4)').allTextContents()).filter(Boolean);
  assert.deepEqual(await names(), ['Aspirin', 'Ibuprofen', 'Paracetamol']);
  await table.locator('[data-testid=scene-table-sort][data-column=name]').click();
  assert.deepEqual(await names(), ['Paracetamol', 'Ibuprofen', 'Aspirin']);
  // The confidence column is there, since the drugs carry one.
  await table.locator('[data-testid=scene-table-sort][data-column=confidence]').waitFor();
  await table.getByTestId('scene-table-filter').fill('0.4');
  assert.equal(await rows.count(), 1);
  assert.match(await table.getByTestId('scene-table-count').innerText(), /^1 of \d+ elements$/);
  await shot(page, 'graph-curator-10-scene-table');
  await rows.first().click();
  await page.getByTestId('inspector-name').filter({ hasText: 'Paracetamol' }).waitFor();
  await table.getByTestId('scene-table-close').click();
  await table.waitFor({ state: 'detached' });
  assert.deepEqual(pageErrors, []);
});

test('layouts: hierarchical, radial around the selected node, grouped by type', async () => {
  await page.getByRole('button', { name: 'Clear', exact: true }).click();
  await medical();
  const place = async () => Object.fromEntries((await visibleNodes()).map((n) => [n.id, n]));
  // Hierarchical: a link's object lies a layer below its subject (graph y grows upwards).
  await page.getByTestId('layout-choice').selectOption('hierarchical');
  await page.waitForTimeout(300);
  let at = await place();
  const edges = await page.evaluate(() => window.kipExplorer.graphEdges().filter((e) => !e.anchor && ['is_class_of', 'is_subclass_of', 'treats'].includes(e.predicate)));
  for (const e of edges) assert.ok(at[e.target].y < at[e.source].y, `${e.predicate}: ${at[e.source].label} above ${at[e.target].label}`);
  await page.keyboard.press('f');
  await page.waitForTimeout(400);
  await shot(page, 'graph-curator-8a-hierarchical');
  // Radial around NSAID: its neighbours on one ring.
  const nsaid = await nodeByLabel(page, 'NSAID');
  await clickNode(page, nsaid.id);
  await page.getByTestId('layout-choice').selectOption('radial');
  await page.waitForTimeout(300);
  at = await place();
  const centre = at[nsaid.id];
  const near = (await page.evaluate((id) => window.kipExplorer.graphEdges().filter((e) => e.source === id || e.target === id).map((e) => (e.source === id ? e.target : e.source)), nsaid.id)).filter((n) => at[n]);
  const radii = near.map((n) => Math.hypot(at[n].x - centre.x, at[n].y - centre.y));
  assert.ok(radii.length >= 2 && Math.max(...radii) - Math.min(...radii) < 1e-6, `one ring: ${radii}`);
  await page.locator('.graph-view').focus();
  await page.keyboard.press('f');
  await page.waitForTimeout(400);
  await shot(page, 'graph-curator-8b-radial');
  // Grouped: every node lies nearest its own type's centre.
  await page.getByTestId('layout-choice').selectOption('grouped');
  await page.waitForTimeout(300);
  const nodes = await visibleNodes();
  const centres = {};
  for (const n of nodes) (centres[n.type] ??= []).push(n);
  const mid = Object.fromEntries(Object.entries(centres).map(([t, ns]) => [t, { x: ns.reduce((s, n) => s + n.x, 0) / ns.length, y: ns.reduce((s, n) => s + n.y, 0) / ns.length }]));
  for (const n of nodes) {
    const nearest = Object.entries(mid).sort((a, b) => Math.hypot(a[1].x - n.x, a[1].y - n.y) - Math.hypot(b[1].x - n.x, b[1].y - n.y))[0][0];
    assert.equal(nearest, n.type, `${n.label} sits with its type`);
  }
  await page.keyboard.press('f');
  await page.waitForTimeout(400);
  await shot(page, 'graph-curator-8c-grouped');
});

test('the workspace is kept across a reload: elements, places, layout and filter', async () => {
  // The grouped layout from the test before, and a filter.
  await openLegend();
  await page.getByTestId('filter-add').click();
  await page.getByTestId('filter-op').selectOption('expired');
  await page.waitForFunction(() => window.kipExplorer.filteredOut().length > 0);
  const before = (await page.evaluate(() => window.kipExplorer.graphNodes())).sort((a, b) => a.id.localeCompare(b.id));
  const out = (await page.evaluate(() => window.kipExplorer.filteredOut())).sort();
  await page.reload();
  await page.waitForFunction(() => window.kipExplorer?.firstGraphPaintMs !== undefined, null, { timeout: 20_000 });
  await page.waitForFunction((n) => window.kipExplorer.graphNodes().length === n, before.length);
  const after = (await page.evaluate(() => window.kipExplorer.graphNodes())).sort((a, b) => a.id.localeCompare(b.id));
  assert.deepEqual(after.map((n) => n.id), before.map((n) => n.id));
  for (let i = 0; i < after.length; i++) assert.ok(Math.hypot(after[i].x - before[i].x, after[i].y - before[i].y) < 1e-6, `${after[i].label} where it was`);
  const ws = await page.evaluate(() => window.kipExplorer.workspace());
  assert.equal(ws.layout, 'grouped');
  assert.equal(ws.filter?.op, 'expired');
  await page.waitForFunction((n) => window.kipExplorer.filteredOut().length === n, out.length);
  assert.deepEqual((await page.evaluate(() => window.kipExplorer.filteredOut())).sort(), out);
  assert.equal(await page.getByTestId('layout-choice').inputValue(), 'grouped');
  await shot(page, 'graph-curator-9-reloaded');
  assert.deepEqual(pageErrors, []);
});
