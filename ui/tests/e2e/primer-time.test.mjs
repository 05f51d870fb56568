// The Primer's time window (issue 15, item 12): counts per key type inside a
// window over `_updated_at`, as the engine's COUNT returns them, and "what
// changed since…" marking the types with recent changes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { startServer, startBrowser, openPage, shot, kip } from './harness.mjs';

let server;
let browser;
let page;
let pageErrors;

before(async () => {
  server = await startServer();
  // One Drug written a second after the import: the newest stamp.
  await sleep(1100);
  kip(server.db, 'exec', 'UPSERT { CONCEPT ?d { {type: "Drug", name: "Ibuprofen"} SET ATTRIBUTES { note: "checked" } } }');
  browser = await startBrowser();
  ({ page, pageErrors } = await openPage(browser, server.url));
});

after(async () => {
  await browser?.close();
  server?.stop();
});

const count = (text) => JSON.parse(kip(server.db, 'exec', text)).result;
const typeButton = (type) => page.locator(`[data-testid=primer-domain][data-domain=Medical] [data-testid=primer-type][data-type=${type}]`);

test('the Primer counts what lies in a time window, as COUNT does', async () => {
  await page.getByTestId('nav-primer').click();
  const from = page.getByTestId('primer-time-from');
  await from.waitFor();
  const drugsAll = count('FIND(COUNT(?x)) WHERE { ?x {type: "Drug"} }');
  assert.equal(await typeButton('Drug').getAttribute('data-count'), String(drugsAll));

  // The window's start at the newest stamp: only the Drug written last.
  await from.fill(await from.getAttribute('max'));
  await page.getByTestId('primer-time-note').waitFor();
  await page.waitForFunction(() => document.querySelector('[data-testid=primer-domain][data-domain=Medical] [data-testid=primer-type][data-type=Drug]')?.getAttribute('data-count') === '1');
  const newest = count('FIND(MAX(?x.metadata._updated_at)) WHERE { ?x {type: "Drug"} }');
  for (const type of ['Drug', 'Symptom']) {
    const engine = count(`FIND(COUNT(?x)) WHERE { ?x {type: "${type}"} FILTER(?x.metadata._updated_at >= "${newest}") }`);
    assert.equal(await typeButton(type).getAttribute('data-count'), String(engine), `${type} in the window`);
  }
  const domainCount = await page.locator('[data-testid=primer-domain][data-domain=Medical] [data-testid=domain-count]').textContent();
  assert.match(domainCount, /^1 concepts?/);
  await shot(page, 'primer-12a-time-window');

  // All time again: the Primer's own counts.
  await page.getByTestId('primer-time-reset').click();
  await page.getByTestId('primer-time-note').waitFor({ state: 'detached' });
  assert.equal(await typeButton('Drug').getAttribute('data-count'), String(drugsAll));
});

test('"what changed since…" marks the types with recent changes', async () => {
  await page.getByTestId('primer-changed-since').selectOption('10m');
  await page.waitForFunction(() => document.querySelector('[data-testid=primer-domain][data-domain=Medical] [data-testid=primer-type][data-type=Drug]')?.getAttribute('data-recent') !== '');
  // Everything was imported moments ago: every Drug counts as changed.
  const drugs = count('FIND(COUNT(?x)) WHERE { ?x {type: "Drug"} }');
  assert.equal(await typeButton('Drug').getAttribute('data-recent'), String(drugs));
  assert.equal(await page.locator('[data-testid=primer-domain][data-domain=Medical] .item.recent').count() > 0, true);
  await shot(page, 'primer-12b-changed-since');
  await page.getByTestId('primer-changed-since').selectOption('');
  await page.waitForFunction(() => document.querySelectorAll('.item.recent').length === 0);
  assert.deepEqual(pageErrors, []);
});

test('the Primer offers the RC11 memory profile and installs it', async () => {
  await page.getByTestId('nav-primer').click();
  const offer = page.locator('[data-testid=profile-offer][data-profile=memory]');
  await offer.waitFor();
  assert.match(await offer.textContent(), /Preference · Insight · Commitment · SleepTask/);
  await shot(page, 'primer-29a-profile-offer');
  await offer.getByTestId('profile-install').click();
  await offer.waitFor({ state: 'detached' });
  assert.deepEqual(count('FIND(?t.name) WHERE { ?t {type: "$ConceptType", name: "Skill"} }'), ['Skill']);
  // Installed as the browser's curator, one traced import per capsule.
  const traced = kip(server.db, 'trace', 'list', '--type', 'SPACE', '--text', 'Imported').trim().split('\n').map((l) => JSON.parse(l));
  assert.ok(traced.some((e) => /preference/i.test(e.message)), JSON.stringify(traced.map((e) => e.message)));
  assert.deepEqual(pageErrors, []);
});
