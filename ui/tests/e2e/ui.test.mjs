// The web UI against a real `kip serve` in headless Chromium: each view's
// main flow, with screenshots saved under ui/test-results/screenshots.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, startBrowser, openPage, shot, settled, clickNode, nodeByLabel, kip, screenshots } from './harness.mjs';
import { startupMarks } from '../page-metrics.mjs';

let server;
let browser;
let page;
let pageErrors;
let logs;

before(async () => {
  server = await startServer();
  browser = await startBrowser();
  ({ page, pageErrors, logs } = await openPage(browser, server.url));
});

after(async () => {
  await browser?.close();
  server?.stop();
});

test('the first graph paints the example knowledge, and the time is recorded', async () => {
  await page.waitForFunction(() => window.kipExplorer?.firstGraphPaintMs !== undefined, null, { timeout: 20_000 });
  await settled(page);
  const nodes = await page.evaluate(() => window.kipExplorer.graphNodes());
  assert.ok(nodes.some((n) => n.label.includes('Aspirin')), 'Aspirin is drawn');
  assert.ok(nodes.some((n) => n.label.includes('张三')), 'the Chinese-named user is drawn');
  const edges = await page.evaluate(() => window.kipExplorer.graphEdges());
  assert.ok(edges.some((e) => e.predicate === 'treats'), 'treats links are drawn');
  const metrics = await page.evaluate(() => ({ paint: window.kipExplorer.firstGraphPaintMs, renderer: window.kipExplorer.renderer }));
  metrics.startupMs = await page.evaluate(startupMarks);
  writeFileSync(join(screenshots, '..', 'metrics.json'), JSON.stringify(metrics, null, 2));
  await shot(page, '01-first-graph');
});

test('the Primer shows $self and the domains, and a type opens in the graph', async () => {
  await page.getByTestId('nav-primer').click();
  await page.getByTestId('primer-identity').waitFor();
  assert.match(await page.getByTestId('primer-identity').innerText(), /\$self/);
  const medical = page.locator('[data-testid=primer-domain][data-domain=Medical]');
  await medical.waitFor();
  assert.match(await medical.innerText(), /Drug/);
  await shot(page, '02-primer');
  await medical.getByRole('button', { name: /Symptom/ }).first().click();
  await page.waitForFunction(() => window.kipExplorer.graphNodes().some((n) => n.type === 'Symptom' && n.label.includes('Headache')));
});

test('search → graph → expand neighbours with the predicate picker → inspect', async () => {
  await page.getByTestId('nav-graph').click();
  await page.getByRole('button', { name: 'Clear', exact: true }).click();
  await page.getByLabel('Search concepts').fill('Aspirin');
  await page.getByRole('option').filter({ hasText: 'Drug' }).first().click();
  await page.waitForFunction(() => window.kipExplorer.graphNodes().length === 1);
  // Fold the legend away so no node hides under it.
  await page.getByTestId('graph-stats').click();
  const aspirin = await nodeByLabel(page, 'Aspirin');
  assert.equal(aspirin.type, 'Drug');
  await settled(page).catch(() => {});
  await clickNode(page, aspirin.id, { double: true });
  const picker = page.getByTestId('predicate-picker');
  await picker.waitFor();
  const treats = picker.locator('button.pred[data-predicate=treats][data-direction=outgoing]');
  assert.match(await treats.innerText(), /treats\s*2/);
  await shot(page, '03-predicate-picker');
  await treats.click();
  // Every treats link is shown: the picker closes (issue 33 §7), off the new neighbours.
  await picker.waitFor({ state: 'detached' });
  await page.waitForFunction(() => window.kipExplorer.graphNodes().some((n) => n.label.includes('Headache')));
  await settled(page);
  // The inspector shows the selected concept, its provenance and its links by predicate.
  const headache = await nodeByLabel(page, 'Headache');
  await clickNode(page, headache.id);
  const inspector = page.getByTestId('inspector');
  await inspector.getByTestId('inspector-name').filter({ hasText: 'Headache' }).waitFor({ timeout: 10_000 }).catch(async (e) => {
    await shot(page, 'debug-headache');
    throw e;
  });
  const text = await inspector.innerText();
  assert.match(text, /Symptom/);
  assert.match(text, /KIP Explorer examples/, 'provenance: source');
  assert.match(text, /incoming links/i);
  assert.match(text, /treats/);
  await shot(page, '04-expanded-and-inspected');
  await page.getByTestId('graph-stats').click();
});

test('the console runs a query and shows a table; Ctrl+Enter runs', async () => {
  await page.getByTestId('nav-console').click();
  const editor = page.locator('.cm-content');
  await editor.click();
  await page.keyboard.press('Control+a');
  await page.keyboard.insertText('FIND(?d.name, ?s.name)\nWHERE {\n  ?d {type: "Drug"}\n  (?d, "treats", ?s)\n}\nORDER BY ?d.name');
  await page.getByTestId('editor-state').filter({ hasText: 'Valid' }).waitFor();
  await page.keyboard.press('Control+Enter');
  const result = page.getByTestId('result');
  await result.locator('table').waitFor();
  const table = await result.innerText();
  assert.match(table, /Aspirin/);
  assert.match(table, /Headache/);
  assert.match(await page.getByTestId('result-meta').innerText(), /\d+ rows/);
  await shot(page, '05-console-table');
});

test('the console marks an error at the exact range the engine reports', async () => {
  const editor = page.locator('.cm-content');
  await editor.click();
  await page.keyboard.press('Control+a');
  await page.keyboard.insertText('FIND(?x) WHERE {\n  ?x {type: "Dru"}\n}');
  const mark = page.locator('.cm-lintRange-error');
  await mark.first().waitFor({ timeout: 10_000 });
  assert.equal(await mark.first().innerText(), '"Dru"');
  const problems = await page.getByTestId('problems').innerText();
  assert.match(problems, /2:13/);
  assert.match(problems, /KIP_2001/);
  assert.match(problems, /Dru/);
  await shot(page, '06-console-error');
  // A syntax error mid-line.
  await page.keyboard.press('Control+a');
  await page.keyboard.insertText('FIND(?x WHERE { ?x {type: "Drug"} }');
  await page.getByTestId('problems').filter({ hasText: 'KIP_1001' }).waitFor();
  // The same position the engine reports on the command line.
  let engine;
  try {
    kip(server.db, 'exec', '--dry-run', 'FIND(?x WHERE { ?x {type: "Drug"} }');
  } catch (e) {
    engine = JSON.parse(e.stdout).error.data;
  }
  assert.ok(engine, 'the engine rejects the text');
  assert.match(await page.getByTestId('problems').innerText(), new RegExp(`^${engine.line}:${engine.column}\\b`));
  const marked = await page.locator('.cm-lintRange-error').first().innerText();
  assert.equal(marked, 'FIND(?x WHERE { ?x {type: "Drug"} }'.slice(engine.column - 1, engine.column - 1 + Math.max(1, engine.length)));
  await shot(page, '06b-console-syntax-error');
});

test('completion offers schema names, and Format prints canonical KIP', async () => {
  const editor = page.locator('.cm-content');
  await editor.click();
  await page.keyboard.press('Control+a');
  await page.keyboard.insertText('FIND(?d) WHERE { ?d {type: "Dr');
  await page.keyboard.press('Control+Space');
  const list = page.locator('.cm-tooltip-autocomplete');
  await list.waitFor();
  assert.match(await list.innerText(), /Drug/);
  assert.match(await list.innerText(), /DrugClass/);
  await page.keyboard.press('Escape');
  await page.keyboard.press('Control+a');
  await page.keyboard.insertText('FIND(?x) WHERE {?x {type:"Drug"}} LIMIT 3');
  await page.getByRole('button', { name: 'Format' }).click();
  await page.waitForFunction(() => document.querySelector('.cm-content')?.textContent?.includes('type: "Drug"'));
  assert.equal(await page.locator('.cm-line').count() > 1, true, 'formatted over several lines');
});

test('paging through a result with next_cursor', async () => {
  const editor = page.locator('.cm-content');
  await editor.click();
  await page.keyboard.press('Control+a');
  await page.keyboard.insertText('FIND(?d.name) WHERE { ?d {type: "Drug"} } ORDER BY ?d.name LIMIT 2');
  await page.getByTestId('run').click();
  await page.getByTestId('next-page').waitFor();
  const first = await page.getByTestId('result').innerText();
  await page.getByTestId('next-page').click();
  await page.getByTestId('result-meta').filter({ hasText: 'page 2' }).waitFor();
  const second = await page.getByTestId('result').innerText();
  assert.notEqual(first, second);
  const names = (s) => s.split('\n').filter((l) => /^\d+\t/.test(l)).map((l) => l.split('\t')[1]);
  for (const n of names(second)) assert.ok(!names(first).includes(n), `${n} is not repeated on page 2`);
});

test('a Chinese query and search', async () => {
  const editor = page.locator('.cm-content');
  await editor.click();
  await page.keyboard.press('Control+a');
  await page.keyboard.insertText('FIND(?u.name, ?l.predicate)\nWHERE {\n  ?u {type: "User", name: "张三"}\n  ?l (?u, "stated", ?p)\n}');
  await page.keyboard.press('Control+Enter');
  await page.getByTestId('result').filter({ hasText: '张三' }).waitFor();
  assert.match(await page.getByTestId('result').innerText(), /张三\s+stated/);
  await page.getByLabel('Search concepts').fill('张三');
  await page.getByRole('option').filter({ hasText: '张三' }).first().waitFor();
  await shot(page, '07-chinese');
  await page.keyboard.press('Escape');
});

test('KML shows the dry-run preview and writes only after confirmation', async () => {
  const editor = page.locator('.cm-content');
  await editor.click();
  await page.keyboard.press('Control+a');
  await page.keyboard.insertText('UPSERT {\n  CONCEPT ?s {\n    {type: "Symptom", name: "Dizziness"}\n    SET ATTRIBUTES { description: "A sensation of spinning." }\n  }\n}');
  await page.keyboard.press('Control+Enter');
  const dialog = page.getByTestId('kml-preview');
  await dialog.waitFor();
  // The preview is the engine's change list as a diff (issue 15), not raw JSON.
  assert.match(await dialog.innerText(), /CREATED[\s\S]*Symptom Dizziness[\s\S]*description\s+A sensation of spinning\./);
  assert.equal(await page.getByTestId('kml-summary').innerText(), 'This creates 1 concept.');
  await shot(page, '08-kml-preview');
  // Nothing is written before Apply.
  assert.match(kip(server.db, 'exec', 'FIND(COUNT(?s)) WHERE { ?s {type: "Symptom", name: "Dizziness"} }'), /"result": 0/);
  await page.getByTestId('kml-apply').click();
  await dialog.waitFor({ state: 'detached' });
  assert.match(kip(server.db, 'exec', 'FIND(COUNT(?s)) WHERE { ?s {type: "Symptom", name: "Dizziness"} }'), /"result": 1/);
});

test('an inspector edit becomes KML that is shown, previewed, then applied', async () => {
  await page.getByLabel('Search concepts').fill('Ibuprofen');
  await page.getByRole('option').filter({ hasText: 'Drug' }).first().click();
  const inspector = page.getByTestId('inspector');
  await inspector.getByTestId('inspector-name').filter({ hasText: 'Ibuprofen' }).waitFor({ timeout: 10_000 }).catch(async (e) => {
    await shot(page, 'debug-inspector');
    throw e;
  });
  await inspector.getByTestId('inspector-edit').click();
  await inspector.getByLabel('Value of risk_level').fill('4');
  await inspector.getByTestId('inspector-review').click();
  const kml = inspector.getByTestId('inspector-kml');
  await kml.waitFor();
  assert.match(await kml.innerText(), /UPSERT[\s\S]*\{type: "Drug", name: "Ibuprofen"\}[\s\S]*risk_level: 4/);
  assert.ok(await inspector.getByTestId('inspector-apply').isDisabled(), 'Apply waits for a preview');
  await inspector.getByTestId('inspector-preview').click();
  await kml.filter({ hasText: 'Dry run: the engine would do this' }).waitFor();
  await shot(page, '08b-inspector-edit');
  assert.match(kip(server.db, 'exec', 'FIND(?d.attributes.risk_level) WHERE { ?d {type: "Drug", name: "Ibuprofen"} }'), /\[\s*3\s*\]/, 'the preview wrote nothing');
  await inspector.getByTestId('inspector-apply').click();
  await kml.waitFor({ state: 'detached' });
  assert.match(kip(server.db, 'exec', 'FIND(?d.attributes.risk_level) WHERE { ?d {type: "Drug", name: "Ibuprofen"} }'), /\[\s*4\s*\]/);
  await inspector.getByText('risk_level').waitFor();
});

test('a write by another process appears live', async () => {
  await page.getByTestId('nav-primer').click();
  const medical = page.locator('[data-testid=primer-domain][data-domain=Medical]');
  await medical.waitFor();
  kip(
    server.db,
    'exec',
    'UPSERT { CONCEPT ?d { {type: "Drug", name: "Naproxen"} SET ATTRIBUTES { description: "An NSAID." } SET PROPOSITIONS { ("belongs_to_domain", {type: "Domain", name: "Medical"}) } } }',
  );
  // The status names who acted (the trace's originator, `cli`), not the program.
  await page.getByTestId('live-activity').filter({ hasText: /^cli: 1 concept created/ }).waitFor({ timeout: 15_000 }).catch(async (e) => {
    await shot(page, 'debug-live');
    console.log('live activity:', await page.getByTestId('live-activity').innerText().catch(() => 'none'), logs.slice(-20));
    throw e;
  });
  // The Primer re-reads itself: Drug now counts seven, as COUNT does (the
  // six example drugs, Cognizine included, + Naproxen).
  await medical.getByRole('button', { name: /Drug\s*7/ }).waitFor({ timeout: 15_000 });
  await page.getByLabel('Search concepts').fill('Naproxen');
  await page.getByRole('option').filter({ hasText: 'Naproxen' }).first().waitFor();
  await page.keyboard.press('Escape');
  await shot(page, '09-live-update');
  // It links to the write's entry: the Trace opens with it expanded.
  await page.getByTestId('live-activity-link').click();
  const entry = page.locator('[data-testid=trace-entry].open').filter({ hasText: 'Naproxen' });
  await entry.getByTestId('trace-command').waitFor();
  assert.equal(await entry.getAttribute('data-type'), 'TRACE');
  await shot(page, '09b-live-update-entry');
});

test('drag-and-drop import of a good and a broken bundle', async () => {
  await page.getByTestId('nav-import').click();
  const zone = page.getByTestId('drop-zone');
  await zone.waitFor();
  const drop = async (name, text) => {
    const dataTransfer = await page.evaluateHandle(
      ([n, t]) => {
        const dt = new DataTransfer();
        dt.items.add(new File([t], n, { type: 'text/yaml' }));
        return dt;
      },
      [name, text],
    );
    await zone.dispatchEvent('drop', { dataTransfer });
  };
  await drop('nausea.yaml', '- type: Symptom\n  name: Nausea\n  description: "Feeling sick."\n');
  await drop('broken.yaml', '- type: Symptom\n  name: Vertigo\n- type: Drugg\n  name: Oops\n');
  const reports = page.getByTestId('import-reports');
  await reports.locator('.report.failed').waitFor();
  await reports.locator('.report.imported').waitFor();
  const text = await reports.innerText();
  assert.match(text, /nausea\.yaml/);
  assert.match(text, /broken\.yaml:3:9/, 'the failure names file, line and column');
  assert.match(text, /Did you mean 'Drug'\?/);
  // A file dropped anywhere else is imported too (and not opened by the browser).
  await page.getByTestId('nav-primer').click();
  const dt = await page.evaluateHandle(() => {
    const d = new DataTransfer();
    d.items.add(new File(['- type: Symptom\n  name: Chills\n  description: "Feeling cold."\n'], 'chills.yaml', { type: 'text/yaml' }));
    return d;
  });
  // Dragging files over the page says where they will go.
  await page.getByTestId('primer').dispatchEvent('dragenter', { dataTransfer: dt });
  await page.getByTestId('drop-overlay').waitFor();
  await page.getByTestId('primer').dispatchEvent('drop', { dataTransfer: dt });
  await page.getByTestId('drop-overlay').waitFor({ state: 'detached' });
  await reports.locator('.report.imported').filter({ hasText: 'chills.yaml' }).waitFor();
  await shot(page, '10-import');
  assert.match(kip(server.db, 'exec', 'FIND(COUNT(?s)) WHERE { ?s {type: "Symptom", name: "Nausea"} }'), /"result": 1/);
  assert.match(kip(server.db, 'exec', 'FIND(COUNT(?s)) WHERE { ?s {type: "Symptom", name: "Vertigo"} }'), /"result": 0/, 'a failed bundle changes nothing');
});

test('no uncaught errors in the page', () => {
  assert.deepEqual(pageErrors, []);
});
