// The Trace view against `kip serve`: writes by an agent (another process,
// named by --originator) show up live, grouped by originator; a filter;
// an entry expands to its command and the diff of what it changed; flag it
// Rejected; revert it (the compensating write appears; a second revert of
// the same entry is refused with the reason shown); promote a selection to
// an Event; the page's own requests are traced as `curator`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, startBrowser, openPage, shot, kip } from './harness.mjs';

let server;
let browser;
let page;

before(async () => {
  server = await startServer();
  browser = await startBrowser();
  ({ page } = await openPage(browser, server.url));
  await page.getByTestId('nav-trace').click();
  await page.getByTestId('trace-view').waitFor();
});

after(async () => {
  await browser?.close();
  server?.stop();
});

test('an agent write appears live, expands to its diff, is flagged, reverted and promoted', async () => {
  kip(server.db, '--originator', 'agent-x', 'exec',
    'UPSERT { CONCEPT ?p { {type: "Symptom", name: "Vertigo"} SET ATTRIBUTES { severity: "mild" } } }');
  const entry = page.getByTestId('trace-entry').filter({ hasText: 'UPSERT: created 1 concept' }).first();
  await entry.waitFor({ timeout: 15_000 });
  const group = page.locator('[data-testid="trace-group"][data-originator="agent-x"]');
  await group.first().waitFor();

  // Filter by free text.
  await page.getByTestId('trace-filter-text').fill('Vertigo');
  await page.getByTestId('trace-apply').click();
  await page.waitForFunction(() =>
    [...document.querySelectorAll('[data-testid="trace-entry"]')].every((e) => e.textContent.includes('UPSERT') || e.dataset.type !== 'TRACE'));

  await entry.getByTestId('trace-entry-toggle').click();
  const detail = entry.getByTestId('trace-detail');
  await detail.getByTestId('trace-command').waitFor();
  assert.match(await detail.getByTestId('trace-command').textContent(), /Vertigo/);
  const change = detail.getByTestId('change').first();
  assert.equal(await change.getAttribute('data-op'), 'created');
  assert.match(await change.textContent(), /Vertigo/);

  await detail.getByTestId('trace-flag-rejected').click();
  await entry.getByTestId('trace-flag').filter({ hasText: 'Rejected' }).waitFor();
  await shot(page, 'trace-expanded');

  await detail.getByTestId('trace-revert').click();
  await page.getByTestId('trace-notice').filter({ hasText: 'Reverted' }).waitFor();
  const found = JSON.parse(kip(server.db, 'exec', 'FIND(COUNT(?s)) WHERE { ?s {type: "Symptom", name: "Vertigo"} }'));
  assert.equal(found.result, 0);
  // Reverting again: the concept is gone since, so the engine refuses and says why.
  await detail.getByTestId('trace-revert').click();
  await entry.getByTestId('trace-revert-refused').waitFor();
  assert.match(await entry.getByTestId('trace-revert-refused').textContent(), /T:\d+/);

  // The page's requests are the curator's.
  const curator = kip(server.db, 'trace', 'list', '--originator', 'curator');
  assert.match(curator, /SelfCorrection/);

  // Promote the agent's entry to an Event.
  await page.getByTestId('trace-filter-text').fill('');
  await page.getByTestId('trace-apply').click();
  await entry.waitFor();
  await entry.locator('input[type="checkbox"]').check();
  await page.getByTestId('trace-promote').click();
  await page.getByTestId('trace-notice').filter({ hasText: 'Promoted 1 entries' }).waitFor();
  const events = JSON.parse(kip(server.db, 'exec', 'FIND(?e.attributes.participants) WHERE { ?e {type: "Event"} }'));
  assert.ok(JSON.stringify(events.result).includes('agent-x'), JSON.stringify(events));
  await shot(page, 'trace-view');
});
