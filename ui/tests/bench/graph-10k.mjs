// Measures (never asserts) the graph at ~10,000 visible nodes: the time to
// draw a query's result and frame times while the layout runs and while
// the user zooms. Usage (after `kip bench --db DIR --concepts 10000
// --propositions 30000 --iterations 1` has generated a graph):
//   KIP_BENCH_DB=DIR node tests/bench/graph-10k.mjs [--canvas]
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { startBrowser, openPage, repo, kipBin } from '../e2e/harness.mjs';
import { measureFrames } from '../page-metrics.mjs';

const db = process.env.KIP_BENCH_DB;
if (!db) throw new Error('set KIP_BENCH_DB to a nexus made by `kip bench`');
const canvas = process.argv.includes('--canvas');
const child = spawn(kipBin, ['--db', db, 'serve', '--addr', '127.0.0.1:0', '--ui', join(repo, 'ui/dist')], { stdio: ['ignore', 'pipe', 'inherit'] });
const url = await new Promise((resolve) => child.stdout.on('data', (d) => { const m = /listening on (\S+)/.exec(String(d)); if (m) resolve(m[1]); }));
const browser = await startBrowser();
try {
  const { page } = await openPage(browser, `${url}/${canvas ? '?renderer=canvas' : ''}`);
  await page.waitForFunction(() => window.kipExplorer?.graphNodes);
  await page.getByRole('button', { name: 'Clear', exact: true }).click().catch(() => {});
  await page.getByTestId('nav-console').click();
  await page.locator('.cm-content').click();
  await page.keyboard.press('Control+a');
  // Every link of the generated graph up to the limit: with 10,000
  // concepts and 30,000 links, 16,000 links touch (nearly) every concept.
  await page.keyboard.insertText(process.env.KIP_BENCH_QUERY ?? 'FIND(?s, ?l, ?o) WHERE { ?l (?s, ?p, ?o) } LIMIT 16000');
  await page.keyboard.press('Control+Enter');
  await page.getByTestId('result-meta').waitFor({ timeout: 120_000 });
  const t0 = Date.now();
  await page.getByRole('tab', { name: /Graph/ }).click();
  await page.waitForFunction(() => window.kipExplorer.graphNodes().length > 1000, null, { timeout: 120_000 });
  // Let the batch of elements finish arriving before counting.
  let last = -1;
  for (let n = await page.evaluate(() => window.kipExplorer.graphNodes().length); n !== last; n = await page.evaluate(() => window.kipExplorer.graphNodes().length)) {
    last = n;
    await page.waitForTimeout(1000);
  }
  const drawMs = Date.now() - t0;
  const nodes = await page.evaluate(() => window.kipExplorer.graphNodes().length);
  const edges = await page.evaluate(() => window.kipExplorer.graphEdges().length);
  const frames = (ms) => page.evaluate(`new Promise((done) => (${measureFrames})(${ms}, done))`);
  const duringLayout = await frames(3000);
  await page.waitForFunction(() => !window.kipExplorer.layoutRunning(), null, { timeout: 60_000 });
  const box = await page.getByTestId('graph-canvas').boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  const zooming = frames(3000);
  for (let i = 0; i < 20; i++) {
    await page.mouse.wheel(0, i < 10 ? -200 : 200);
    await page.waitForTimeout(120);
  }
  const duringZoom = await zooming;
  const renderer = await page.evaluate(() => window.kipExplorer.renderer);
  await page.screenshot({ path: join(repo, 'ui/test-results/screenshots', `bench-10k-${renderer}.png`) });
  console.log(JSON.stringify({ renderer, nodes, edges, drawMs, duringLayout, duringZoom }, null, 2));
} finally {
  await browser.close();
  child.kill();
}
