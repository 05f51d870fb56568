// The console asks the engine what a text is (its `validate` outline):
// whether it writes, so the dry-run preview comes before anything is
// written, and which placeholders it has, for the parameters panel. The
// console used to guess both from the text, and missed a write that follows
// a query on the same line and a placeholder after a `//` inside a string.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, startBrowser, openPage, shot, kip } from './harness.mjs';

let server;
let browser;
let page;
let pageErrors;

before(async () => {
  server = await startServer();
  browser = await startBrowser();
  ({ page, pageErrors } = await openPage(browser, server.url));
  await page.getByTestId('nav-console').click();
});

after(async () => {
  await browser?.close();
  server?.stop();
});

async function write(text) {
  await page.locator('.cm-content').click();
  await page.keyboard.press('Control+a');
  await page.keyboard.insertText(text);
}

const symptoms = (name) => kip(server.db, 'exec', `FIND(COUNT(?s)) WHERE { ?s {type: "Symptom", name: "${name}"} }`);

test('a write that follows a query on the same line gets its dry-run preview before anything is written', async () => {
  await write('FIND(?d.name) WHERE { ?d {type: "Drug"} } UPSERT { CONCEPT ?s { {type: "Symptom", name: "Vertigo"} } }');
  // Run at once: the console must ask the engine itself, not rely on the
  // editor's check of the text having come back.
  await page.keyboard.press('Control+Enter');
  const dialog = page.getByTestId('kml-preview');
  await dialog.waitFor({ timeout: 10_000 }).catch((e) => {
    throw new Error(`no preview; the nexus now holds ${symptoms('Vertigo')}`, { cause: e });
  });
  // The engine's own description of the change (issue 15): what is created, by name.
  assert.equal(await page.getByTestId('kml-summary').innerText(), 'This creates 1 concept.');
  assert.match(symptoms('Vertigo'), /"result": 0/, 'the preview wrote nothing');
  await page.getByTestId('writes-chip').waitFor();
  await shot(page, 'console-preview-of-a-write-after-a-query');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'detached' });
  assert.match(symptoms('Vertigo'), /"result": 0/, 'Cancel wrote nothing');

  await page.getByTestId('run').click();
  await dialog.waitFor();
  await page.getByTestId('kml-apply').click();
  await dialog.waitFor({ state: 'detached' });
  assert.match(symptoms('Vertigo'), /"result": 1/, 'Apply wrote the concept');
});

test('Debug refuses a write that follows a query, and writes nothing', async () => {
  await write('FIND(?d.name) WHERE { ?d {type: "Drug"} } UPSERT { CONCEPT ?s { {type: "Symptom", name: "Tinnitus"} } }');
  await page.keyboard.press('Control+Shift+Enter');
  await page.getByText('Debug profiles queries').waitFor();
  assert.match(symptoms('Tinnitus'), /"result": 0/);
});

test('the parameters panel asks for the placeholders the engine finds, not for text in strings or comments', async () => {
  await write('FIND(?d.name) WHERE { ?d {type: :t} FILTER(?d.name != "http://x :y") } ORDER BY ?d.name LIMIT :n // :z');
  const inputs = page.locator('.params label .mono');
  await page
    .waitForFunction(() => [...document.querySelectorAll('.params label .mono')].map((e) => e.textContent).join(' ') === ':t :n', null, { timeout: 10_000 })
    .catch(async (e) => {
      throw new Error(`the panel asks for ${(await inputs.allInnerTexts()).join(' ')}`, { cause: e });
    });
  await page.locator('.params label').filter({ hasText: ':t' }).locator('input').fill('Drug');
  await page.locator('.params label').filter({ hasText: ':n' }).locator('input').fill('2');
  await page.getByTestId('run').click();
  await page.getByTestId('result').locator('table').waitFor();
  assert.match(await page.getByTestId('result-meta').innerText(), /^2 rows/);
  await shot(page, 'console-parameters-from-the-engine');
});

test('no uncaught errors in the console page', () => {
  assert.deepEqual(pageErrors, []);
});
