// What agents read and the recall simulator (issue 31 §7, §8): the Trace
// view's per-originator read log with the elements each read returned
// (one opens in the inspector), recall heat on the graph, and "What would
// the agent recall for …?" with score parts, pin after the engine's
// preview, the toast naming the trace entry.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, startBrowser, openPage, shot, kip } from './harness.mjs';

let server;
let browser;
let page;
let pageErrors;

const DRUGS = 'FIND(?d) WHERE { ?d {type: "Drug"} }';

before(async () => {
  server = await startServer();
  // Two reads by an agent, in two processes: two folded entries.
  kip(server.db, '--originator', 'agent-x', 'exec', DRUGS);
  kip(server.db, '--originator', 'agent-x', 'exec', DRUGS);
  browser = await startBrowser();
  ({ page, pageErrors } = await openPage(browser, server.url));
});

after(async () => {
  await browser?.close();
  server?.stop();
});

test('the Trace view lists what each agent read and opens an element it returned', async () => {
  await page.getByTestId('nav-trace').click();
  await page.getByTestId('trace-tab-reads').click();
  const agent = page.locator('[data-testid=read-log-originator][data-originator=agent-x]');
  await agent.waitFor();
  assert.equal(await agent.getByTestId('read-entry').count(), 2);
  const aspirin = agent.getByTestId('read-id').filter({ hasText: 'Aspirin' }).first();
  await aspirin.waitFor();
  await shot(page, 'recall-31a-read-log');
  await aspirin.click();
  await page.getByTestId('inspector-name').filter({ hasText: 'Aspirin' }).waitFor();
  assert.deepEqual(pageErrors, []);
});

test('recall heat sizes the concepts agents read and says by whom', async () => {
  await page.getByTestId('nav-graph').click();
  const heat = page.getByTestId('recall-heat');
  await heat.waitFor();
  await heat.check();
  await page.getByTestId('recall-heat-summary').filter({ hasText: '2 reads' }).waitFor();
  const drugs = JSON.parse(kip(server.db, 'exec', DRUGS)).result.map((d) => d.id);
  const read = await page.waitForFunction((ids) => {
    const nodes = window.kipExplorer?.graphNodes() ?? [];
    const hot = nodes.find((n) => ids.includes(n.id));
    return hot ? window.kipExplorer.nodeStyle(hot.id) : null;
  }, drugs);
  const style = await read.jsonValue();
  assert.match(style.label, /read 2× by agent-x$/);
  await shot(page, 'recall-31b-heat');
  await heat.uncheck();
  assert.deepEqual(pageErrors, []);
});

test('the recall simulator ranks with score parts and pins after a preview', async () => {
  await page.getByTestId('nav-health').click();
  const panel = page.getByTestId('recall-panel');
  await panel.scrollIntoViewIfNeeded();
  await page.getByTestId('recall-text').fill('Headache');
  await page.getByTestId('recall-mode').selectOption('keyword');
  await page.getByTestId('recall-run').click();
  const hit = page.locator('[data-testid=recall-hit][data-name=Headache]');
  await hit.waitFor();
  assert.match(await hit.getByTestId('recall-parts').textContent(), /keyword \d\.\d{3}/);
  assert.match(await hit.textContent(), /treats Aspirin/);
  await hit.scrollIntoViewIfNeeded();
  await shot(page, 'recall-31c-simulator');
  await hit.getByTestId('recall-pin').click();
  await page.getByTestId('kml-preview').waitFor();
  const pinned = () => JSON.parse(kip(server.db, 'exec', 'FIND(?s) WHERE { ?s {type: "Symptom", name: "Headache"} }')).result[0].metadata.pinned;
  assert.equal(pinned(), undefined, 'a preview writes nothing');
  await shot(page, 'recall-31d-pin-preview');
  await page.getByTestId('kml-apply').click();
  await page.getByText(/Pinned Headache \(C:\d+\) as trace entry T:\d+/).waitFor();
  assert.equal(pinned(), true);
  await hit.getByTestId('recall-pinned').waitFor();
  assert.deepEqual(pageErrors, []);
});

test('the inspector lists what is related by meaning, and a row opens it', async (t) => {
  kip(server.db, 'exec', `UPSERT {
    CONCEPT ?t { {type: "$ConceptType", name: "Memory"} SET ATTRIBUTES { description: "Something the agent remembers." } }
  }`);
  kip(server.db, 'exec', `UPSERT {
    CONCEPT ?a { {type: "Memory", name: "Mortgage renewal"} SET ATTRIBUTES { description: "Renew the loan with the bank before the fixed rate ends in June." } }
    CONCEPT ?b { {type: "Memory", name: "Home loan refinancing"} SET ATTRIBUTES { description: "Refinance the mortgage with another bank." } }
    CONCEPT ?c { {type: "Memory", name: "Dark mode"} SET ATTRIBUTES { description: "The user prefers dark themes in every app." } }
  }`);
  const modes = JSON.parse(kip(server.db, 'exec', 'DESCRIBE PRIMER')).result.search_modes ?? [];
  if (!modes.includes('semantic')) {
    assert.notEqual(process.env.KIP_EMBED_REQUIRED, '1', 'the setup promised an embedding model');
    t.skip('no embedding model installed');
    return;
  }
  await page.getByTestId('nav-graph').click();
  await page.getByLabel('Search concepts').fill('Mortgage renewal');
  await page.getByRole('option').filter({ hasText: 'Mortgage renewal' }).first().click();
  await page.getByTestId('inspector-name').filter({ hasText: 'Mortgage renewal' }).waitFor();
  const first = page.getByTestId('related-by-meaning').getByTestId('related-item').first();
  await page.waitForFunction(() => document.querySelector('[data-testid=related-by-meaning] [data-testid=related-item]')?.getAttribute('data-name') === 'Home loan refinancing', null, { timeout: 30_000 })
    .catch(async (e) => {
      console.log('related:', await page.getByTestId('related-by-meaning').innerText().catch(() => 'none'));
      throw e;
    });
  await shot(page, 'recall-30-related-by-meaning');
  await first.click();
  await page.getByTestId('inspector-name').filter({ hasText: 'Home loan refinancing' }).waitFor();
  assert.deepEqual(pageErrors, []);
});
