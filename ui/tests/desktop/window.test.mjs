// The real desktop window: `kip-explorer` (built with the custom-protocol
// feature, so it embeds ui/dist) on a temp nexus with the examples and a
// watched capsule folder, driven over WebDriver through tauri-driver and
// Debian's WebKitWebDriver. Run under Xvfb (scripts/test.sh does).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, copyFileSync, writeFileSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startupMarks } from '../page-metrics.mjs';
import { repo, kipBin, screenshots } from '../e2e/harness.mjs';
import { openWindow } from './window.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const PORT = 14444 + 2 * (process.pid % 1000);

let desktop;
let browser;
let dir;
let launchedAt = 0;

before(async () => {
  if (!existsSync(kipBin)) throw new Error(`kip is missing at ${kipBin} (scripts/test.sh builds it)`);
  dir = mkdtempSync(join(tmpdir(), 'kip-desktop-'));
  const db = join(dir, 'nexus');
  const capsules = join(dir, 'capsules');
  mkdirSync(capsules);
  execFileSync(kipBin, ['--db', db, 'import', join(repo, 'capsules/examples/10_medical_schema.kip'), join(repo, 'capsules/examples/11_medical_data.kip')], { stdio: 'ignore' });
  // The watched folder: one good capsule (the third example) and one broken bundle.
  copyFileSync(join(repo, 'capsules/examples/12_cognizine.kip'), join(capsules, '12_cognizine.kip'));
  writeFileSync(join(capsules, 'broken.yaml'), '- type: Drugg\n  name: Oops\n');
  desktop = await openWindow(PORT, ['--db', db, '--capsules', capsules], { configDir: join(dir, 'config') });
  ({ browser, launchedAt } = desktop);
  mkdirSync(screenshots, { recursive: true });
});

after(async () => {
  await desktop?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function frames() {
  await browser.executeAsync((done) => requestAnimationFrame(() => requestAnimationFrame(() => done())));
}

test('the window opens on the nexus and paints the example graph', async () => {
  const path = await browser.$('[data-testid=nexus-path]');
  await path.waitForExist({ timeout: 30_000 });
  await browser.saveScreenshot(join(screenshots, 'desktop-00-start.png'));
  await browser.waitUntil(async () => (await path.getText()).includes('nexus'), { timeout: 30_000, timeoutMsg: 'the nexus path is not shown' });
  await browser.waitUntil(
    () => browser.execute(() => (window.kipExplorer?.graphNodes?.() ?? []).length > 0),
    { timeout: 30_000, timeoutMsg: 'the graph never painted' },
  );
  // Measured, not asserted: from asking WebDriver for the window to a
  // painted graph, and the page's own clock (navigation start → paint).
  const painted = Date.now() - launchedAt;
  await browser.waitUntil(() => browser.execute(() => window.kipExplorer.firstGraphPaintMs !== undefined), { timeout: 30_000 });
  assert.match(await browser.getTitle(), /KIP Explorer — .*nexus/);
  const renderer = await browser.execute(() => window.kipExplorer.renderer);
  const pageMs = await browser.execute(() => window.kipExplorer.firstGraphPaintMs);
  const webglRenderer = await browser.execute(() => window.kipExplorer.webglRenderer);
  // Where the page's time went: navigation timing and the UI's own marks.
  const startupMs = await browser.execute(startupMarks);
  writeFileSync(
    join(screenshots, '..', 'metrics-desktop.json'),
    JSON.stringify({ renderer, webglRenderer, launchToGraphMs: painted, navigationToGraphMs: pageMs, startupMs }, null, 2),
  );
  assert.ok(['webgl', 'canvas'].includes(renderer));
  await browser.waitUntil(() => browser.execute(() => !window.kipExplorer.layoutRunning()), { timeout: 30_000, timeoutMsg: 'the layout never settled' });
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
  // The Primer's "query in the console" button fills the editor and runs it.
  await (await browser.$('[data-testid=nav-primer]')).click();
  const query = await browser.$('button[aria-label="Query Drug in the console"]');
  await query.waitForExist({ timeout: 15_000 });
  await query.click();
  const result = await browser.$('[data-testid=result] table');
  await result.waitForExist({ timeout: 15_000 });
  await browser.waitUntil(async () => /Aspirin/.test(await result.getText()), { timeout: 15_000, timeoutMsg: 'no Aspirin row' });
  assert.match(await (await browser.$('.cm-content')).getText(), /type: "Drug"/);
  await frames();
  await browser.saveScreenshot(join(screenshots, 'desktop-03-console.png'));
});

test('the query debugger in the window: Debug draws the diagram with the plan', async () => {
  // The editor still holds the Drug query of the previous test.
  await (await browser.$('[data-testid=debug]')).click();
  const plan = await browser.$('[data-testid=plan]');
  await plan.waitForExist({ timeout: 15_000 });
  const node = await browser.$('[data-testid=diagram-node]');
  await node.waitForExist({ timeout: 15_000 });
  assert.match(await (await browser.$('[data-testid=why-title]')).getText(), /^\d+ rows?$/);
  await frames();
  await browser.saveScreenshot(join(screenshots, 'desktop-03b-debug.png'));
});

test('the watched folder imports a good capsule and reports a broken one', async () => {
  await (await browser.$('[data-testid=nav-import]')).click();
  const files = await browser.$('[data-testid=watched-files]');
  await files.waitForExist({ timeout: 15_000 });
  const text = () => browser.execute(() => document.querySelector('[data-testid=watched-files]')?.textContent ?? '');
  await browser.waitUntil(async () => /Imported\s*12_cognizine\.kip/.test(await text()), {
    timeout: 30_000,
    timeoutMsg: 'the good capsule was not imported',
  });
  await browser.waitUntil(async () => /Failed\s*broken\.yaml[\s\S]*broken\.yaml:1:9[\s\S]*Drugg/.test(await text()), {
    timeout: 30_000,
    timeoutMsg: 'the broken file was not reported',
  });
  await frames();
  await browser.saveScreenshot(join(screenshots, 'desktop-04-import.png'));
});

test('the watched folder can be changed in the app', async () => {
  const other = join(dir, 'other-capsules');
  mkdirSync(other);
  writeFileSync(join(other, 'nausea.yaml'), '- type: Symptom\n  name: Nausea\n  description: "Feeling sick."\n');
  const input = await browser.$('input[aria-label="Capsule folder"]');
  await input.waitForExist({ timeout: 10_000 });
  await input.clearValue();
  await input.setValue(other);
  await (await browser.$('button=Watch')).click();
  const text = () => browser.execute(() => document.querySelector('[data-testid=watched-files]')?.textContent ?? '');
  await browser.waitUntil(async () => /Imported\s*nausea\.yaml/.test(await text()), { timeout: 30_000, timeoutMsg: 'the new folder was not watched' });
  assert.doesNotMatch(await text(), /12_cognizine/);
  await frames();
  await browser.saveScreenshot(join(screenshots, 'desktop-05-other-folder.png'));
});

test('files dragged from another application onto the window are imported', async () => {
  // A real X drag and drop: a GTK window offers the files as a file manager
  // does, and xdotool drags them with the mouse onto the KIP Explorer window.
  const drops = join(dir, 'drops');
  mkdirSync(drops);
  const good = join(drops, 'fever.yaml');
  const broken = join(drops, 'bad-drop.yaml');
  writeFileSync(good, '- type: Symptom\n  name: Night Sweats\n  description: "Sweating during sleep."\n');
  writeFileSync(broken, '- type: Symptom\n  name: Vertigo\n- type: Drugg\n  name: Oops\n');
  const source = spawn('/usr/bin/python3', [join(here, 'drag-source.py'), '1260', '740', good, broken], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    await new Promise((ok, fail) => {
      source.stdout.on('data', (d) => String(d).includes('ready') && ok());
      source.on('exit', (code) => fail(new Error(`the drag source exited (${code})`)));
    });
    const xdotool = (...args) => execFileSync('xdotool', args.map(String));
    const pause = (ms) => new Promise((r) => setTimeout(r, ms));
    const [fromX, fromY, toX, toY] = [1340, 800, 700, 420];
    xdotool('mousemove', fromX, fromY);
    await pause(200);
    xdotool('mousedown', 1);
    for (let i = 1; i <= 25; i++) {
      xdotool('mousemove', Math.round(fromX + ((toX - fromX) * i) / 25), Math.round(fromY + ((toY - fromY) * i) / 25));
      await pause(40);
    }
    // Tauri announces the drag to the page, which says where files will go.
    const overlay = await browser.$('[data-testid=drop-overlay]');
    await overlay.waitForExist({ timeout: 10_000, timeoutMsg: 'no drop overlay while dragging files over the window' });
    await browser.saveScreenshot(join(screenshots, 'desktop-06-dragging.png'));
    xdotool('mouseup', 1);
    await overlay.waitForExist({ reverse: true, timeout: 10_000, timeoutMsg: 'the drop overlay stayed after the drop' });
    const reports = await browser.$('[data-testid=import-reports]');
    await reports.waitForExist({ timeout: 30_000, timeoutMsg: 'no import report appeared after the drop' });
    const text = () => browser.execute(() => document.querySelector('[data-testid=import-reports]')?.textContent ?? '');
    await browser.waitUntil(async () => /fever\.yaml/.test(await text()) && /bad-drop\.yaml:3:9/.test(await text()), {
      timeout: 30_000,
      timeoutMsg: 'the dropped files were not both reported',
    });
    assert.match(await text(), /Did you mean 'Drug'\?/);
    assert.match(execFileSync(kipBin, ['--db', join(dir, 'nexus'), 'exec', 'FIND(COUNT(?s)) WHERE { ?s {type: "Symptom", name: "Night Sweats"} }'], { encoding: 'utf8' }), /"result": 1/);
    assert.match(
      execFileSync(kipBin, ['--db', join(dir, 'nexus'), 'exec', 'FIND(COUNT(?s)) WHERE { ?s {type: "Symptom", name: "Vertigo"} }'], { encoding: 'utf8' }),
      /"result": 0/,
      'a failed file changes nothing',
    );
    await frames();
    await browser.saveScreenshot(join(screenshots, 'desktop-07-dropped.png'));
  } finally {
    source.kill();
  }
});

/** The app's preferences file (src-tauri/src/prefs.rs), as it stands. */
function remembered() {
  try {
    return JSON.parse(readFileSync(join(dir, 'config', 'prefs.json'), 'utf8'));
  } catch {
    return {};
  }
}

test('a restart without --db or --capsules reopens the last nexus, folder and window size', async () => {
  await browser.setWindowSize(1180, 760);
  await browser.waitUntil(() => (remembered().window?.width ?? 1440) < 1300, { timeout: 10_000, timeoutMsg: 'the new size was not saved' });
  const prefs = remembered();
  assert.equal(prefs.last_nexus, join(dir, 'nexus'));
  assert.ok(prefs.capsules, 'the watched folder is remembered');
  await desktop.stop();

  desktop = await openWindow(PORT, [], { configDir: join(dir, 'config') });
  ({ browser } = desktop);
  const path = await browser.$('[data-testid=nexus-path]');
  await path.waitForExist({ timeout: 30_000 });
  await browser.waitUntil(async () => (await path.getText()).includes(join(dir, 'nexus')), { timeout: 30_000, timeoutMsg: 'the last nexus was not reopened' });
  const [width, height] = await browser.execute(() => [window.innerWidth, window.innerHeight]);
  assert.ok(Math.abs(width - prefs.window.width) <= 2 && Math.abs(height - prefs.window.height) <= 2, `opened at ${width}×${height}, remembered ${prefs.window.width}×${prefs.window.height}`);
  const watched = await browser.executeAsync((done) => window.__TAURI_INTERNALS__.invoke('api_call', { operation: 'watch_status', body: null }).then((s) => done(s.folder), (e) => done(String(e))));
  assert.equal(watched, prefs.capsules);
  await frames();
  await browser.saveScreenshot(join(screenshots, 'desktop-08-restarted.png'));
});
