// Decay triage (issue 31 §5): from the Health view's expired / fading
// counts to the triage panel; choose memories, preview an action (counts
// and the diff, nothing written), apply it as one traced write, see the
// list refresh and the toast name the trace entry, which reverts it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, startBrowser, openPage, shot, kip } from './harness.mjs';

let server;
let browser;
let page;
let pageErrors;

before(async () => {
  server = await startServer();
  kip(server.db, 'exec', `UPSERT {
    CONCEPT ?a { {type: "Symptom", name: "Old ache"} SET PROPOSITIONS { ("belongs_to_domain", {type: "Domain", name: "Medical"}) } } WITH METADATA { expires_at: "2001-01-01T00:00:00Z" }
    CONCEPT ?b { {type: "Symptom", name: "Old itch"} } WITH METADATA { expires_at: "2002-01-01T00:00:00Z" }
    CONCEPT ?c { {type: "Symptom", name: "Faint cough"} } WITH METADATA { memory_strength: 0.05 }
  }`);
  browser = await startBrowser();
  ({ page, pageErrors } = await openPage(browser, server.url));
});

after(async () => {
  await browser?.close();
  server?.stop();
});

const result = (text) => JSON.parse(kip(server.db, 'exec', text)).result;
const domainOf = (name) => result(`FIND(?d.name) WHERE { ?x {type: "Symptom", name: "${name}"} (?x, "belongs_to_domain", ?d) }`);

test('the expired count opens decay triage; archive is previewed, applied, traced and revertible', async () => {
  await page.getByTestId('nav-health').click();
  await page.getByTestId('health-triage-expired').click();
  const panel = page.getByTestId('decay-triage');
  await panel.waitFor();
  const ache = panel.locator('[data-testid=triage-item][data-name="Old ache"]');
  await ache.waitFor();
  assert.equal(await panel.getByTestId('triage-item').count(), 2);
  await ache.getByTestId('triage-check').check();
  await panel.getByTestId('triage-action-archive').click();
  const preview = page.getByTestId('triage-preview');
  await preview.waitFor();
  assert.match(await preview.getByTestId('triage-counts').textContent(), /1 concept changed · 1 link deleted · 1 link created/);
  assert.ok(await preview.getByTestId('change').count() >= 3);
  await panel.scrollIntoViewIfNeeded();
  await shot(page, 'triage-31a-preview');
  assert.deepEqual(domainOf('Old ache'), ['Medical'], 'a preview writes nothing');
  await preview.getByTestId('triage-apply').click();
  await ache.waitFor({ state: 'detached' });
  assert.deepEqual(domainOf('Old ache'), ['Archived']);
  const toast = page.getByText(/Archive: 1 memory; trace entry T:\d+ reverts it/);
  await toast.waitFor();
  const entry = (await toast.textContent()).match(/T:\d+/)[0];
  await shot(page, 'triage-31b-applied');
  kip(server.db, 'trace', 'revert', entry);
  assert.deepEqual(domainOf('Old ache'), ['Medical'], 'the trace entry reverts it');
  assert.deepEqual(pageErrors, []);
});

test('the fading tab selects all and renews them', async () => {
  await page.getByTestId('nav-health').click();
  await page.getByTestId('health-triage-fading').click();
  const panel = page.getByTestId('decay-triage');
  const cough = panel.locator('[data-testid=triage-item][data-name="Faint cough"]');
  await cough.waitFor();
  await panel.getByTestId('triage-select-all').check();
  await panel.getByTestId('triage-action-renew').click();
  await page.getByTestId('triage-preview').waitFor();
  await shot(page, 'triage-31c-renew');
  await page.getByTestId('triage-apply').click();
  await panel.getByTestId('triage-empty').waitFor();
  assert.deepEqual(result('FIND(?x.metadata.memory_strength) WHERE { ?x {type: "Symptom", name: "Faint cough"} }'), [1.0]);
  assert.deepEqual(pageErrors, []);
});
