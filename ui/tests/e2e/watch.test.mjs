// `kip serve --capsules DIR` in the browser: files written into the watched
// folder while the Import view is open show up with their status — a good
// capsule as imported (and its knowledge in the graph), a broken one as
// failed with its line and column — without a reload.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, startBrowser, openPage, shot } from './harness.mjs';

let server;
let browser;
let page;
let folder;

before(async () => {
  folder = mkdtempSync(join(tmpdir(), 'kip-e2e-capsules-'));
  server = await startServer(['--capsules', folder]);
  browser = await startBrowser();
  ({ page } = await openPage(browser, server.url));
  await page.getByTestId('nav-import').click();
  await page.getByTestId('watched-files').waitFor();
});

after(async () => {
  await browser?.close();
  server?.stop();
  rmSync(folder, { recursive: true, force: true });
});

test('a capsule written into the watched folder is imported and listed live', async () => {
  writeFileSync(join(folder, 'fatigue.kip'), 'UPSERT {\n  CONCEPT ?f { {type: "Symptom", name: "Fatigue"} }\n}\n');
  const item = page.getByTestId('watched-files').locator('li', { hasText: 'fatigue.kip' });
  await item.locator('.badge.imported').waitFor({ timeout: 30_000 });
  const r = await page.evaluate(async () => {
    const res = await fetch('/api/kip', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ command: 'FIND(?s.name) WHERE { ?s {type: "Symptom", name: "Fatigue"} }' }) });
    return res.json();
  });
  assert.deepEqual(r.result, ['Fatigue']);
});

test('a broken capsule written into the folder is listed as failed with its line and column', async () => {
  writeFileSync(join(folder, 'broken.kip'), 'UPSERT {\n  CONCEPT ?x {\n    {type: "Symptom" name: "X"}\n  }\n}\n');
  const item = page.getByTestId('watched-files').locator('li', { hasText: 'broken.kip' });
  await item.locator('.badge.failed').waitFor({ timeout: 30_000 });
  assert.match(await item.innerText(), /broken\.kip:3:\d+/);
  await shot(page, 'watch-folder-live');
});

test('a watched file that fails raises a visible notice, wherever the user is', async () => {
  await page.getByTestId('nav-graph').click();
  writeFileSync(join(folder, 'also-broken.kip'), 'UPSERT {\n  CONCEPT ?x { {type: "Nope", name: "X"} }\n}\n');
  const notice = page.locator('.toast.error', { hasText: 'also-broken.kip' });
  await notice.waitFor({ timeout: 30_000 });
  assert.match(await notice.innerText(), /Watched file also-broken\.kip:2:\d+ failed to import/);
  await shot(page, 'watch-failed-file-notice');
  await notice.getByTestId('toast-action').click();
  await page.getByTestId('watched-files').locator('li', { hasText: 'also-broken.kip' }).waitFor();
});
