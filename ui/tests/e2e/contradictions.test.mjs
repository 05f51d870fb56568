// The contradictions queue (issue 31 §4): two birthplaces for one person
// (a functional predicate) side by side with their provenance; "Keep this
// one" shows the engine's preview, Apply marks the other superseded, the
// entry leaves the queue, and the Trace shows the write and reverts it.
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
    CONCEPT ?t { {type: "$ConceptType", name: "Place"} SET ATTRIBUTES { description: "A place." } }
    CONCEPT ?p { {type: "$PropositionType", name: "born_in"} SET ATTRIBUTES { description: "Where a person was born: one place.", subject_types: ["Person"], object_types: ["Place"], functional: true } }
    CONCEPT ?paris { {type: "Place", name: "Paris"} }
    CONCEPT ?lyon { {type: "Place", name: "Lyon"} }
  }`);
  kip(server.db, 'exec', `UPSERT { CONCEPT ?ada { {type: "Person", name: "Ada"} SET PROPOSITIONS { ("born_in", {type: "Place", name: "Paris"}) } } }
    WITH METADATA { source: "letter-1843", author: "archivist", confidence: 0.9 }`);
  kip(server.db, 'exec', `UPSERT { CONCEPT ?ada { {type: "Person", name: "Ada"} SET PROPOSITIONS { ("born_in", {type: "Place", name: "Lyon"}) } } }
    WITH METADATA { source: "chat-7", author: "$self", confidence: 0.4 }`);
  browser = await startBrowser();
  ({ page, pageErrors } = await openPage(browser, server.url));
});

after(async () => {
  await browser?.close();
  server?.stop();
});

const listed = () => JSON.parse(kip(server.db, 'contradictions'));

test('a contradiction is shown side by side, resolved after the preview, and reverted from the Trace', async () => {
  await page.getByTestId('nav-health').click();
  const count = page.getByTestId('health-contradictions');
  await count.waitFor();
  assert.equal(await count.getAttribute('data-count'), '1');
  await page.getByTestId('health-open-contradictions').click();
  const ada = page.locator('[data-testid=contradiction][data-subject="Ada"][data-predicate="born_in"]');
  await ada.waitFor();
  const paris = ada.locator('[data-testid=contradiction-side][data-object="Paris"]');
  const lyon = ada.locator('[data-testid=contradiction-side][data-object="Lyon"]');
  assert.match(await paris.textContent(), /letter-1843/);
  assert.match(await paris.textContent(), /archivist/);
  assert.match(await lyon.textContent(), /chat-7/);
  assert.match(await lyon.textContent(), /0\.4/);
  await page.getByTestId('contradictions-queue').scrollIntoViewIfNeeded();
  await shot(page, 'health-31c-contradictions');

  await ada.getByTestId('contradiction-reason').fill('The 1843 letter is the better source.');
  await paris.getByTestId('contradiction-keep').click();
  await page.getByTestId('kml-preview').waitFor();
  assert.match(await page.getByTestId('kml-preview').textContent(), /superseded/);
  await shot(page, 'health-31d-contradiction-preview');
  assert.equal(listed().length, 1, 'a preview writes nothing');
  await page.getByTestId('kml-apply').click();
  await ada.waitFor({ state: 'detached' });
  assert.deepEqual(listed(), []);
  const old = JSON.parse(kip(server.db, 'exec',
    'FIND(?l) WHERE { ?l ({type: "Person", name: "Ada"}, "born_in", {type: "Place", name: "Lyon"}) }')).result[0];
  assert.equal(old.metadata.superseded, true);
  assert.equal(old.metadata.superseded_reason, 'The 1843 letter is the better source.');

  // The Trace shows the write; reverting it brings the contradiction back.
  await page.getByTestId('nav-trace').click();
  await page.getByTestId('trace-view').waitFor();
  const entry = page.getByTestId('trace-entry').filter({ hasText: 'UPDATE' }).first();
  await entry.waitFor();
  await entry.getByTestId('trace-entry-toggle').click();
  const detail = entry.getByTestId('trace-detail');
  await detail.getByTestId('trace-command').waitFor();
  assert.match(await detail.getByTestId('trace-command').textContent(), /superseded_reason/);
  await shot(page, 'health-31e-contradiction-trace');
  await detail.getByTestId('trace-revert').click();
  await detail.getByTestId('trace-revert-go').click();
  await page.getByTestId('trace-notice').filter({ hasText: 'Reverted' }).waitFor();
  assert.equal(listed().length, 1);
  assert.deepEqual(pageErrors, []);
});

test('an attribute value another source wrote over shows both values, and the earlier is kept from the preview', async () => {
  kip(server.db, 'exec', `UPSERT { CONCEPT ?p { {type: "Person", name: "Ann"} SET ATTRIBUTES { birthplace: "Oslo" } } }
    WITH METADATA { source: "chat:1", author: "$self", confidence: 0.9 }`);
  kip(server.db, 'exec', `UPSERT { CONCEPT ?p { {type: "Person", name: "Ann"} SET ATTRIBUTES { birthplace: "Bergen" } } }
    WITH METADATA { source: "doc:7", author: "agent-b", confidence: 0.6 }`);
  const attributeOnes = () => listed().filter((c) => c.kind === 'attribute');
  assert.equal(attributeOnes().length, 1);
  await page.getByTestId('nav-health').click();
  await page.getByTestId('health-open-contradictions').click();
  const ann = page.locator('[data-testid=contradiction][data-kind=attribute][data-subject="Ann"][data-predicate="birthplace"]');
  await ann.waitFor();
  const oslo = ann.locator('[data-testid=contradiction-side][data-object="Oslo"]');
  const bergen = ann.locator('[data-testid=contradiction-side][data-object="Bergen"]');
  assert.match(await oslo.textContent(), /earlier value/);
  assert.match(await oslo.textContent(), /chat:1/);
  assert.match(await bergen.textContent(), /current value/);
  assert.match(await bergen.textContent(), /doc:7/);
  assert.match(await bergen.textContent(), /agent-b/);
  await ann.scrollIntoViewIfNeeded();
  await shot(page, 'health-31f-attribute-contradiction');

  await oslo.getByTestId('contradiction-keep').click();
  await page.getByTestId('kml-preview').waitFor();
  assert.match(await page.getByTestId('kml-preview').textContent(), /superseded_values/);
  assert.equal(attributeOnes().length, 1, 'a preview writes nothing');
  await page.getByTestId('kml-apply').click();
  await ann.waitFor({ state: 'detached' });
  assert.deepEqual(attributeOnes(), []);
  const now = JSON.parse(kip(server.db, 'exec', 'FIND(?p) WHERE { ?p {type: "Person", name: "Ann"} }')).result[0];
  assert.equal(now.attributes.birthplace, 'Oslo');
  assert.equal(now.metadata.source, 'chat:1');
  assert.equal(now.metadata.superseded_values[0].value, 'Bergen');
  assert.deepEqual(pageErrors, []);
});
