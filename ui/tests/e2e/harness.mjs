// End-to-end harness: a real `kip serve` on an ephemeral port over a fresh
// nexus with the example capsules imported, and Debian's Chromium driven by
// playwright-core (never a downloaded browser).
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
export const repo = resolve(here, '../../..');
export const kipBin = process.env.KIP_BIN ?? join(repo, 'target/debug/kip');
export const screenshots = join(repo, 'ui/test-results/screenshots');
const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';

export function kip(db, ...args) {
  return execFileSync(kipBin, ['--db', db, ...args], { encoding: 'utf8' });
}

/**
 * Starts `kip serve` on a fresh nexus with the examples; resolves to {url, db, dir, stop}.
 * `args` are extra `kip serve` options (e.g. `--capsules DIR`).
 */
export async function startServer(args = []) {
  if (!existsSync(kipBin)) throw new Error(`${kipBin} is missing: build it with cargo build -p kip-cli`);
  if (!existsSync(join(repo, 'ui/dist/index.html'))) throw new Error('ui/dist is missing: run npm run build');
  const dir = mkdtempSync(join(tmpdir(), 'kip-e2e-'));
  const db = join(dir, 'nexus');
  execFileSync(kipBin, ['--db', db, 'import', join(repo, 'capsules/examples')], { stdio: 'ignore' });
  const child = spawn(kipBin, ['--db', db, 'serve', '--addr', '127.0.0.1:0', '--ui', join(repo, 'ui/dist'), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    // Preferences (theme, panels) in the test's own folder, never the user's.
    env: { ...process.env, RUST_LOG: 'warn', KIP_CONFIG_DIR: process.env.KIP_CONFIG_DIR ?? join(dir, 'config') },
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const url = await new Promise((resolveUrl, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`kip serve did not start: ${stderr}`)), 30_000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolveUrl(m[1]);
      }
    });
    child.on('exit', (code) => reject(new Error(`kip serve exited with ${code}: ${stderr}`)));
  });
  return {
    url,
    db,
    dir,
    stop() {
      child.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function startBrowser() {
  mkdirSync(screenshots, { recursive: true });
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run',
    ],
  });
  return browser;
}

/**
 * A 1440×900 page of `browser` at `url`: resolves to {page, pageErrors,
 * logs}, the page's uncaught errors and its console messages and failed
 * requests, collected from before it loads.
 */
export async function openPage(browser, url) {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  const pageErrors = [];
  const logs = [];
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  page.on('console', (m) => logs.push(`${m.type()}: ${m.text()}`));
  page.on('requestfailed', (r) => logs.push(`failed: ${r.url()} ${r.failure()?.errorText}`));
  await page.goto(url);
  return { page, pageErrors, logs };
}

export async function shot(page, name) {
  // Two animation frames, so the canvas has painted the latest state.
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  await page.screenshot({ path: join(screenshots, `${name}.png`) });
}

/** Waits until the graph layout has settled (it stops by itself). */
export async function settled(page) {
  await page.waitForFunction(() => window.kipExplorer && !window.kipExplorer.layoutRunning(), null, { timeout: 20_000 });
}

/** Double-clicks (or clicks) a graph node at its drawn position. */
export async function clickNode(page, id, { double = false } = {}) {
  const pos = await page.evaluate((nodeId) => window.kipExplorer.nodePosition(nodeId), id);
  if (!pos) throw new Error(`node ${id} is not drawn`);
  const box = await page.getByTestId('graph-canvas').boundingBox();
  const x = box.x + pos.x;
  const y = box.y + pos.y;
  // A node under the toolbar, the legend or a popover cannot be clicked.
  const covered = await page.evaluate(([px, py]) => document.elementFromPoint(px, py)?.tagName !== 'CANVAS', [x, y]);
  if (covered) throw new Error(`node ${id} is drawn under another element at ${x},${y}`);
  if (double) await page.mouse.dblclick(x, y);
  else await page.mouse.click(x, y);
}

export async function nodeByLabel(page, text) {
  return page.evaluate((t) => window.kipExplorer.graphNodes().find((n) => n.label.includes(t)) ?? null, text);
}

/** What `trigger` made the page download: its suggested name and bytes. */
export async function downloaded(page, trigger) {
  const [download] = await Promise.all([page.waitForEvent('download'), trigger()]);
  return { name: download.suggestedFilename(), bytes: readFileSync(await download.path()) };
}

/** Closes every toast that offers to be dismissed. */
export async function dismissToasts(page) {
  for (const b of await page.getByRole('button', { name: 'Dismiss' }).all()) await b.click().catch(() => {});
}

/** Starts from the given drugs alone in the graph, settled and fitted. */
export async function onlyDrugs(page, ...names) {
  await page.getByTestId('nav-graph').click();
  const clear = page.getByRole('button', { name: 'Clear', exact: true });
  if (await clear.isEnabled()) await clear.click();
  for (const name of names) {
    await page.getByLabel('Search concepts').fill(name);
    await page.getByRole('option').filter({ hasText: name }).filter({ hasText: 'Drug' }).first().click();
    await page.waitForFunction((n) => window.kipExplorer.graphNodes().some((x) => x.label.includes(n)), name);
  }
  await page.locator('.graph-view').focus();
  await page.keyboard.press('Escape');
  await settled(page);
  await dismissToasts(page);
  await page.keyboard.press('f');
  await page.waitForTimeout(400);
}
