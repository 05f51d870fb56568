// The real desktop window: `kip-explorer` (built with the custom-protocol
// feature, so it embeds ui/dist) on a temp nexus with the examples and a
// watched capsule folder, driven over WebDriver through tauri-driver and
// Debian's WebKitWebDriver. Run under Xvfb (scripts/test.sh does).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, copyFileSync, writeFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { remote } from 'webdriverio';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '../../..');
const app = process.env.KIP_EXPLORER_BIN ?? join(repo, 'target/debug/kip-explorer');
const kipBin = process.env.KIP_BIN ?? join(repo, 'target/debug/kip');
const driverBin = process.env.TAURI_DRIVER ?? join(repo, '.tools/bin/tauri-driver');
const screenshots = join(repo, 'ui/test-results/screenshots');
const PORT = 4444 + (process.pid % 1000);

let driver;
let browser;
let dir;

async function waitForPort(port, ms) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    try {
      const r = await fetch(`http://127.0.0.1:${port}/status`);
      if (r.ok) return;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`tauri-driver did not listen on ${port}`);
}

before(async () => {
  for (const [what, path] of [['kip-explorer', app], ['kip', kipBin], ['tauri-driver', driverBin]]) {
    if (!existsSync(path)) throw new Error(`${what} is missing at ${path} (scripts/test.sh builds and installs it)`);
  }
  dir = mkdtempSync(join(tmpdir(), 'kip-desktop-'));
  const db = join(dir, 'nexus');
  const capsules = join(dir, 'capsules');
  mkdirSync(capsules);
  execFileSync(kipBin, ['--db', db, 'import', join(repo, 'capsules/examples/10_medical_schema.kip'), join(repo, 'capsules/examples/11_medical_data.kip')], { stdio: 'ignore' });
  // The watched folder: one good capsule (the third example) and one broken bundle.
  copyFileSync(join(repo, 'capsules/examples/12_cognizine.kip'), join(capsules, '12_cognizine.kip'));
  writeFileSync(join(capsules, 'broken.yaml'), '- type: Drugg\n  name: Oops\n');
  driver = spawn(driverBin, ['--port', String(PORT)], { stdio: 'ignore' });
  await waitForPort(PORT, 20_000);
  browser = await remote({
    hostname: '127.0.0.1',
    port: PORT,
    logLevel: 'error',
    connectionRetryTimeout: 60_000,
    capabilities: {
      'tauri:options': { application: app, args: ['--db', db, '--capsules', capsules] },
    },
  });
  mkdirSync(screenshots, { recursive: true });
});

after(async () => {
  await browser?.deleteSession().catch(() => {});
  driver?.kill();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function frames() {
  await browser.executeAsync((done) => requestAnimationFrame(() => requestAnimationFrame(() => done())));
}

test('the window opens on the nexus and paints the example graph', async () => {
  const path = await browser.$('[data-testid=nexus-path]');
  await path.waitForExist({ timeout: 30_000 });
  await browser.waitUntil(async () => (await path.getText()).includes('nexus'), { timeout: 30_000 });
  await browser.waitUntil(
    () => browser.execute(() => (window.kipExplorer?.graphNodes?.() ?? []).length > 0),
    { timeout: 30_000, timeoutMsg: 'the graph never painted' },
  );
  const renderer = await browser.execute(() => window.kipExplorer.renderer);
  assert.ok(['webgl', 'canvas'].includes(renderer));
  await browser.waitUntil(() => browser.execute(() => !window.kipExplorer.layoutRunning()), { timeout: 30_000 });
  await frames();
  await browser.saveScreenshot(join(screenshots, 'desktop-01-graph.png'));
});

test('the Primer shows $self and the Medical domain', async () => {
  await (await browser.$('[data-testid=nav-primer]')).click();
  const identity = await browser.$('[data-testid=primer-identity]');
  await identity.waitForExist({ timeout: 15_000 });
  assert.match(await identity.getText(), /\$self/);
  const medical = await browser.$('[data-testid=primer-domain][data-domain=Medical]');
  await medical.waitForExist({ timeout: 15_000 });
  await frames();
  await browser.saveScreenshot(join(screenshots, 'desktop-02-primer.png'));
});

test('a console query runs through the desktop commands', async () => {
  await (await browser.$('[data-testid=nav-console]')).click();
  const editor = await browser.$('.cm-content');
  await editor.waitForExist();
  await editor.click();
  await browser.keys(['Control', 'a']);
  await browser.keys(['Delete']);
  await editor.addValue('FIND(?d.name) WHERE { ?d {type: "Drug"} } ORDER BY ?d.name');
  await (await browser.$('[data-testid=run]')).click();
  const result = await browser.$('[data-testid=result] table');
  await result.waitForExist({ timeout: 15_000 });
  assert.match(await result.getText(), /Aspirin/);
  await frames();
  await browser.saveScreenshot(join(screenshots, 'desktop-03-console.png'));
});

test('the watched folder imports a good capsule and reports a broken one', async () => {
  await (await browser.$('[data-testid=nav-import]')).click();
  const files = await browser.$('[data-testid=watched-files]');
  await files.waitForExist({ timeout: 15_000 });
  await browser.waitUntil(async () => /Imported[\s\S]*12_cognizine/.test(await files.getText()) || /12_cognizine[\s\S]*Imported/.test(await files.getText()), {
    timeout: 30_000,
    timeoutMsg: 'the good capsule was not imported',
  });
  await browser.waitUntil(async () => /broken\.yaml:1:9/.test(await files.getText()), { timeout: 30_000, timeoutMsg: 'the broken file was not reported' });
  await frames();
  await browser.saveScreenshot(join(screenshots, 'desktop-04-import.png'));
});
