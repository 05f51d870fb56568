// A memory's shape (issue 31 §9): a large memory opens on the schema map
// (types sized by their counts, links counted by type pair) instead of a
// few dozen unconnected dots; from it, a type's concepts or the
// best-connected concepts with the links among them. Small memories keep
// their first graph; the toolbar's Map and the Health view open the map.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, startBrowser, openPage, shot, kip, settled } from './harness.mjs';

let server;
let browser;
let page;
let pageErrors;

/** A capsule of `n` Notes, each citing the one before, filed in no domain. */
function largeCapsule(n) {
  const lines = [
    'UPSERT {',
    '  CONCEPT ?t { {type: "$ConceptType", name: "Note"} SET ATTRIBUTES { description: "A note." } }',
    '  CONCEPT ?p { {type: "$PropositionType", name: "cites"} SET ATTRIBUTES { description: "Cites.", subject_types: ["Note"], object_types: ["Note"] } }',
    '}',
  ];
  for (let start = 0; start < n; start += 500) {
    lines.push('UPSERT {');
    for (let i = start; i < Math.min(n, start + 500); i++) {
      const cites = i > 0 ? ` SET PROPOSITIONS { ("cites", {type: "Note", name: "note ${i - 1}"}) }` : '';
      lines.push(`  CONCEPT ?n${i} { {type: "Note", name: "note ${i}"}${cites} }`);
    }
    lines.push('}');
  }
  return lines.join('\n') + '\n';
}

before(async () => {
  server = await startServer();
  browser = await startBrowser();
});

after(async () => {
  await browser?.close();
  server?.stop();
});

const engineMap = () => JSON.parse(kip(server.db, 'schema', '--map'));

test('a small memory keeps its first graph, and Map shows its shape', async () => {
  ({ page, pageErrors } = await openPage(browser, server.url));
  await page.waitForFunction(() => window.kipExplorer?.firstGraphPaintMs !== undefined, null, { timeout: 20_000 });
  assert.equal(await page.getByTestId('schema-map').count(), 0);
  await page.getByTestId('schema-map-open').click();
  await page.getByTestId('schema-map-type').first().waitFor();
  const map = engineMap();
  const drawn = await page.getByTestId('schema-map-type').evaluateAll((gs) => gs.map((g) => [g.dataset.type, Number(g.dataset.count)]));
  assert.deepEqual(drawn, map.types.slice(0, 30).map((t) => [t.name, t.count]));
  const labels = await page.getByTestId('schema-map-edge').allTextContents();
  const top = map.edges.find((e) => e.predicate !== 'belongs_to_domain');
  assert.ok(labels.some((l) => l.startsWith(`${top.predicate} · `)), labels.join(' | '));
  await shot(page, 'schema-map-31a-small');
  // A type opens its concepts in the graph.
  const type = map.types.find((t) => t.name === 'Drug') ?? map.types[0];
  await page.locator(`[data-testid="schema-map-type"][data-type="${type.name}"]`).click();
  await page.getByTestId('schema-map').waitFor({ state: 'detached' });
  await page.waitForFunction((t) => window.kipExplorer.graphNodes().some((n) => n.type === t), type.name);
  assert.deepEqual(pageErrors, []);
  await page.close();
});

test('a large memory opens on the schema map, and its hubs come with the links among them', async () => {
  const file = join(server.dir, 'large.kip');
  writeFileSync(file, largeCapsule(5200));
  kip(server.db, 'import', file);
  ({ page, pageErrors } = await openPage(browser, server.url));
  await page.getByTestId('schema-map').waitFor();
  await page.locator('[data-testid="schema-map-type"][data-type="Note"]').waitFor();
  assert.equal(await page.locator('[data-testid="schema-map-type"][data-type="Note"]').getAttribute('data-count'), '5200');
  assert.match(await page.getByTestId('schema-map-summary').textContent(), /links/);
  const labels = await page.getByTestId('schema-map-edge').allTextContents();
  assert.ok(labels.includes('cites · 5,199'), labels.join(' | '));
  // No first graph was drawn behind it.
  assert.equal(await page.evaluate(() => window.kipExplorer?.graphNodes?.().length ?? 0), 0);
  await shot(page, 'schema-map-31b-large');
  await page.getByTestId('schema-map-hubs').click();
  await page.getByTestId('schema-map').waitFor({ state: 'detached' });
  const hubs = engineMap().hubs.map((h) => h.id);
  await page.waitForFunction((n) => window.kipExplorer.graphNodes().length >= n, hubs.length);
  const nodes = await page.evaluate(() => window.kipExplorer.graphNodes().map((n) => n.id));
  for (const id of hubs) assert.ok(nodes.includes(id), `hub ${id} is drawn`);
  // The links among them came too.
  await page.waitForFunction(() => window.kipExplorer.graphEdges().length > 0);
  await settled(page);
  await shot(page, 'schema-map-31c-hubs');
  // The Health view opens the map.
  await page.getByTestId('nav-health').click();
  await page.getByTestId('health-schema-map').click();
  await page.getByTestId('schema-map').waitFor();
  await page.getByTestId('schema-map-close').click();
  await page.getByTestId('schema-map').waitFor({ state: 'detached' });
  assert.deepEqual(pageErrors, []);
});
