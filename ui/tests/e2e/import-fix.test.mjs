// The import fix loop ends inside the app (issue 33 §12): an error's "did
// you mean" applied to the file's text, the text edited and imported again,
// the failure replaced by the success, and what was imported opened in the
// graph.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, startBrowser, openPage, shot } from './harness.mjs';

let server;
let browser;
let page;
let pageErrors;

before(async () => {
  server = await startServer();
  browser = await startBrowser();
  ({ page, pageErrors } = await openPage(browser, server.url));
  await page.getByTestId('nav-import').click();
});

after(async () => {
  await browser?.close();
  server?.stop();
});

const drop = (name, text) => page.locator('input[type=file]').setInputFiles({ name, mimeType: 'text/plain', buffer: Buffer.from(text) });
const reportsOf = (name) => page.getByTestId('import-reports').locator('li', { hasText: name });

test('"did you mean" is applied in the file, imported again, and the failure gives way to the success', async () => {
  await drop('testamol.kip', 'UPSERT {\n  CONCEPT ?d { {type: "Drug", name: "Testamol"} SET PROPOSITIONS { ("treats", {type: "Symptom", name: "Headake"}) } }\n}\n');
  const link = page.getByTestId('problem-link').first();
  await link.waitFor();
  await link.click();
  const viewer = page.getByTestId('file-viewer');
  await viewer.waitFor();
  const suggestion = viewer.getByTestId('viewer-suggestion').first();
  assert.equal(await suggestion.innerText(), 'Use “Headache”');
  await suggestion.click();
  const editor = viewer.getByTestId('viewer-editor');
  assert.match(await editor.inputValue(), /name: "Headache"\}/);
  assert.doesNotMatch(await editor.inputValue(), /Headake/);
  await shot(page, 'import-fix-33a-suggestion-applied');
  await viewer.getByTestId('viewer-reimport').click();
  await viewer.waitFor({ state: 'detached' });
  // One card for the file, and it says imported.
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=import-reports] li').length === 1);
  assert.equal(await reportsOf('testamol.kip').count(), 1);
  assert.match(await reportsOf('testamol.kip').innerText(), /Imported/);
  // What it imported opens in the graph.
  await reportsOf('testamol.kip').getByTestId('open-imported').click();
  await page.waitForFunction(() => window.kipExplorer?.graphNodes?.().some((n) => n.label.includes('Testamol')));
  const edges = await page.evaluate(() => window.kipExplorer.graphEdges().map((e) => e.predicate));
  assert.ok(edges.includes('treats'), edges.join());
  await shot(page, 'import-fix-33b-opened-in-graph');
  assert.deepEqual(pageErrors, []);
});

test('a file is edited in place; a still-broken edit shows its new problem there', async () => {
  await page.getByTestId('nav-import').click();
  await drop('bundle.yaml', '- type: Drgu\n  name: Fixamol\n');
  const failed = reportsOf('bundle.yaml');
  await failed.getByTestId('problem-link').click();
  const viewer = page.getByTestId('file-viewer');
  await viewer.getByTestId('viewer-edit').click();
  const editor = viewer.getByTestId('viewer-editor');
  // A first edit that is still wrong: the viewer stays, with the new problem.
  await editor.fill('- type: Drug\n  name: Fixamol\n');
  await viewer.getByTestId('viewer-reimport').click();
  await page.waitForFunction(() => /description/.test(document.querySelector('[data-testid=viewer-message]')?.textContent ?? ''));
  assert.equal(await editor.inputValue(), '- type: Drug\n  name: Fixamol\n');
  await shot(page, 'import-fix-33c-still-broken');
  await editor.fill('- type: Drug\n  name: Fixamol\n  description: A made-up painkiller.\n');
  await viewer.getByTestId('viewer-reimport').click();
  await viewer.waitFor({ state: 'detached' });
  assert.match(await reportsOf('bundle.yaml').innerText(), /Imported/);
  assert.equal(await reportsOf('bundle.yaml').count(), 1);
  assert.deepEqual(pageErrors, []);
});
