// Preferences kept by the host (issue 15, item 16): the theme and the
// panels' state survive a reload in a fresh browser profile (no
// localStorage), because `kip serve` keeps them in its config folder
// (`prefs_get` / `prefs_put`, here `$KIP_CONFIG_DIR/prefs.json`).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, startBrowser, openPage, shot } from './harness.mjs';

const config = mkdtempSync(join(tmpdir(), 'kip-prefs-'));
let server;
let browser;

before(async () => {
  process.env.KIP_CONFIG_DIR = config;
  server = await startServer();
  browser = await startBrowser();
});

after(async () => {
  await browser?.close();
  server?.stop();
  delete process.env.KIP_CONFIG_DIR;
  rmSync(config, { recursive: true, force: true });
});

async function ready(page) {
  await page.waitForFunction(() => window.kipExplorer?.firstGraphPaintMs !== undefined, null, { timeout: 20_000 });
}

test('theme and panels survive a reload through the host', async () => {
  const first = await openPage(browser, server.url);
  let page = first.page;
  await ready(page);
  // system → dark
  await page.getByRole('button', { name: 'Theme: system' }).click();
  await page.waitForFunction(() => document.documentElement.dataset.theme === 'dark');
  // The legend closed, the inspector folded in the graph view.
  const stats = page.getByTestId('graph-stats');
  if ((await stats.getAttribute('aria-expanded')) === 'true') await stats.click();
  assert.equal(await stats.getAttribute('aria-expanded'), 'false');
  await page.getByLabel('Search concepts').fill('Aspirin');
  await page.getByRole('option').filter({ hasText: 'Aspirin' }).first().click();
  await page.getByTestId('inspector-fold').click();
  await page.getByTestId('inspector-unfold').waitFor();
  await page.waitForFunction(async () => {
    const r = await (await fetch('/api/prefs_get', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).json();
    return r.values?.theme === 'dark' && r.values?.legend === 'closed' && r.values?.['inspector-folded']?.graph === true;
  });
  const file = JSON.parse(readFileSync(join(config, 'prefs.json'), 'utf8'));
  assert.equal(file.theme, 'dark');
  assert.equal(file.legend, 'closed');
  assert.equal(file['inspector-folded'].graph, true);
  assert.deepEqual(first.pageErrors, []);
  await page.context().close();

  // A fresh profile: nothing in localStorage, everything from the host.
  const second = await openPage(browser, server.url);
  page = second.page;
  await ready(page);
  assert.equal(await page.evaluate(() => localStorage.getItem('kip-explorer.theme')), '"dark"', 'mirrored from the host');
  assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'dark');
  assert.equal(await page.getByTestId('graph-stats').getAttribute('aria-expanded'), 'false');
  await page.getByLabel('Search concepts').fill('Aspirin');
  await page.getByRole('option').filter({ hasText: 'Aspirin' }).first().click();
  await page.getByTestId('inspector-unfold').waitFor();
  await shot(page, 'prefs-16-after-reload');
  // Back to the system theme for whoever looks next.
  await page.getByRole('button', { name: 'Theme: dark' }).click();
  await page.getByRole('button', { name: 'Theme: light' }).click();
  await page.waitForFunction(() => document.documentElement.dataset.theme === undefined);
  assert.deepEqual(second.pageErrors, []);
});
