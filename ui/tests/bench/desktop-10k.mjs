// Measures (never asserts) the desktop window at ~10,000 visible nodes: the
// same steps as graph-10k.mjs, in the real Tauri window (WebKitGTK) driven
// over WebDriver. Run under Xvfb after `kip bench` made a graph and the
// window was built with the custom-protocol feature:
//   KIP_BENCH_DB=DIR xvfb-run -a -s "-screen 0 1440x900x24" node tests/bench/desktop-10k.mjs [--canvas]
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openWindow } from '../desktop/window.mjs';
import { screenshots } from '../e2e/harness.mjs';
import { measureFrames, wheelZoom } from '../page-metrics.mjs';

const db = process.env.KIP_BENCH_DB;
if (!db) throw new Error('set KIP_BENCH_DB to a nexus made by `kip bench`');
const canvas = process.argv.includes('--canvas');
const PORT = 15444 + 2 * (process.pid % 1000);
const dir = mkdtempSync(join(tmpdir(), 'kip-desktop-bench-'));
mkdirSync(join(dir, 'capsules'));

let desktop;
let browser;
const step = (what) => console.error(`desktop-10k: ${what}`);
try {
  step('opening the window');
  desktop = await openWindow(PORT, ['--db', db, '--capsules', join(dir, 'capsules')], { connectionRetryTimeout: 120_000 });
  ({ browser } = desktop);
  const frames = (ms) => browser.executeAsync(`(${measureFrames})(${ms}, arguments[arguments.length - 1])`);
  const nodes = () => browser.execute(() => window.kipExplorer?.graphNodes?.().length ?? 0);
  await browser.waitUntil(() => browser.execute(() => !!window.kipExplorer?.graphNodes), { timeout: 60_000 });
  if (canvas) {
    step('reloading with the canvas renderer');
    await browser.execute(() => {
      location.search = '?renderer=canvas';
    });
    await browser.pause(1000);
    await browser.waitUntil(() => browser.execute(() => !!window.kipExplorer?.graphNodes), { timeout: 60_000 });
  }
  const clear = await browser.$('button=Clear');
  if ((await clear.isExisting()) && (await clear.isEnabled())) await clear.click();
  step('running the query');
  await (await browser.$('[data-testid=nav-console]')).click();
  await (await browser.$('.cm-content')).click();
  await browser.keys(['Control', 'a']);
  // One key per command: WebKitWebDriver drops a repeated key within one.
  for (const key of process.env.KIP_BENCH_QUERY ?? 'FIND(?s, ?l, ?o) WHERE { ?l (?s, ?p, ?o) } LIMIT 16000') await browser.keys(key);
  await browser.keys(['Control', 'Enter']);
  await (await browser.$('[data-testid=result-meta]')).waitForExist({ timeout: 120_000 });
  step('drawing the result');
  const t0 = Date.now();
  await (await browser.$('//*[@role="tab"][contains(., "Graph")]')).click();
  await browser.waitUntil(async () => (await nodes()) > 1000, { timeout: 120_000 });
  for (let last = -1, n = await nodes(); n !== last; n = await nodes()) {
    last = n;
    await browser.pause(1000);
  }
  const drawMs = Date.now() - t0;
  const count = await nodes();
  const edges = await browser.execute(() => window.kipExplorer.graphEdges().length);
  step('measuring frames');
  const duringLayout = await frames(3000);
  await browser.waitUntil(() => browser.execute(() => !window.kipExplorer.layoutRunning()), { timeout: 120_000 });
  const idle = await frames(2000);
  // One script, so the wheel notches arrive while the frames are counted.
  const duringZoom = await browser.executeAsync(
    `const done = arguments[arguments.length - 1]; (${wheelZoom})(20, 120, () => {}); (${measureFrames})(3000, done);`,
  );
  const renderer = await browser.execute(() => window.kipExplorer.renderer);
  mkdirSync(screenshots, { recursive: true });
  await browser.saveScreenshot(join(screenshots, `bench-desktop-10k-${renderer}.png`));
  console.log(JSON.stringify({ window: 'desktop', renderer, nodes: count, edges, drawMs, idle, duringLayout, duringZoom }, null, 2));
} catch (e) {
  await browser?.saveScreenshot(join(screenshots, 'bench-desktop-10k-failed.png')).catch(() => {});
  throw e;
} finally {
  await desktop?.stop();
  rmSync(dir, { recursive: true, force: true });
}
