// The curator's desk, second pass (issue 33), on a small agent memory: the
// examples, the RC11 memory profile, and `data/memory.kip` (a Relationships
// domain of people, preferences and events, written by an agent with
// lifecycle metadata, one `expires_at` past). Each point seen in a
// screenshot: the overview counts what is in the memory and the first
// graph shows it (§1); the Trace hides the app's own reads, filters by
// time of day, names entries by their global id, marks a reverted entry
// and asks before a revert (§2, §3); an edit is the curator's, with typed
// lifecycle inputs (§4); the dry-run diff is readable in the inspector
// (§5); the keyboard stays with the graph after a search (§8); one time
// format with its zone, past `expires_at` flagged (§9); outcomes in words (§11).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startServer, startBrowser, openPage, shot, settled, kip, repo } from './harness.mjs';

let server;
let browser;
let page;
let pageErrors;

before(async () => {
  server = await startServer();
  kip(server.db, 'import', join(repo, 'capsules/profiles/memory'));
  kip(server.db, '--originator', 'agent-m', 'import', join(repo, 'ui/tests/e2e/data/memory.kip'));
  browser = await startBrowser();
  ({ page, pageErrors } = await openPage(browser, server.url));
  await page.waitForFunction(() => window.kipExplorer?.firstGraphPaintMs !== undefined, null, { timeout: 20_000 });
  await settled(page);
});

after(async () => {
  await browser?.close();
  server?.stop();
});

const exec = (query) => JSON.parse(kip(server.db, 'exec', query)).result;
/** `2026-11-27 20:26:43 UTC`: the one format, with its zone. */
const ONE_FORMAT = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} (UTC|GMT[+-]\d{1,2}(:\d{2})?|[A-Z]{2,5})$/;

async function inspect(name) {
  await page.getByTestId('nav-graph').click();
  await page.getByLabel('Search concepts').fill(name);
  await page.getByRole('option').filter({ hasText: name }).first().click();
  await page.getByTestId('inspector').getByTestId('inspector-name').filter({ hasText: name }).waitFor({ timeout: 10_000 });
  return page.getByTestId('inspector');
}

test('§1 the Primer counts a domain by its members, by type, and the first graph shows the memory', async () => {
  // The first graph holds the agent's memory, not only the examples.
  const labels = await page.evaluate(() => window.kipExplorer.graphNodes().map((n) => n.label));
  for (const name of ['Ada Lovelace', 'Bob Marley', 'Ada prefers tea', 'Call with Cy']) {
    assert.ok(labels.some((l) => l.includes(name)), `${name} is not in the first graph: ${labels.join(', ')}`);
  }
  await shot(page, 'memory-01-first-graph');

  await page.getByTestId('nav-primer').click();
  const rel = page.locator('[data-testid=primer-domain][data-domain=Relationships]');
  await rel.waitFor();
  // The memory's own domain comes before the engine's CoreSchema.
  const order = await page.locator('[data-testid=primer-domain]').evaluateAll((els) => els.map((e) => e.dataset.domain));
  assert.ok(order.indexOf('Relationships') < order.indexOf('CoreSchema'), order.join(', '));
  const members = exec('FIND(COUNT(?x)) WHERE { (?x, "belongs_to_domain", {type: "Domain", name: "Relationships"}) }');
  assert.equal(members, 8);
  assert.match(await rel.getByTestId('domain-members-count').innerText(), /^8 members$/);
  const byType = Object.fromEntries(
    await rel.getByTestId('domain-member-type').evaluateAll((els) => els.map((e) => [e.dataset.type, Number(e.dataset.count)])),
  );
  assert.deepEqual(byType, { Person: 3, Preference: 3, Event: 2 });
  for (const [type, n] of Object.entries(byType)) {
    const counted = exec(`FIND(COUNT(?x)) WHERE { ?x {type: "${type}"} (?x, "belongs_to_domain", {type: "Domain", name: "Relationships"}) }`);
    assert.equal(n, counted, type);
  }
  // The types' home domain is kept apart: CoreSchema defines Person, Relationships defines nothing.
  assert.equal(await rel.getByTestId('primer-type').count(), 0);
  assert.ok(await page.locator('[data-testid=primer-domain][data-domain=CoreSchema] [data-testid=primer-type][data-type=Person]').count());
  await shot(page, 'memory-02-primer');

  // A member type opens those members in the graph.
  await page.getByTestId('nav-graph').click();
  await page.getByRole('button', { name: 'Clear', exact: true }).click();
  await page.getByTestId('nav-primer').click();
  await rel.locator('[data-testid=domain-member-type][data-type=Preference]').click();
  await page.waitForFunction(() => window.kipExplorer.graphNodes().filter((n) => n.type === 'Preference').length === 3);
});

test('§4 §5 §9 an edit is the curator’s, with typed lifecycle inputs; the dry run reads in the inspector; times in one format', async () => {
  const inspector = await inspect('Ada prefers coffee');
  // §9: one format with the zone; past expires_at flagged.
  assert.match(await inspector.getByTestId('meta-created').innerText(), ONE_FORMAT);
  assert.match(await inspector.locator('[data-testid=meta-expires_at] time').innerText(), ONE_FORMAT);
  await inspector.getByTestId('expired').waitFor();
  await shot(page, 'memory-03-provenance');

  await inspector.getByTestId('inspector-edit').click();
  const form = inspector.getByTestId('inspector-edit-form');
  // Typed inputs for the lifecycle metadata, the provenance already the curator's.
  assert.equal(await form.locator('#m-expires').getAttribute('type'), 'datetime-local');
  assert.equal(await form.locator('#m-strength').getAttribute('type'), 'number');
  assert.equal(await form.locator('#m-strength').getAttribute('max'), '1');
  assert.equal(await form.locator('#m-tier').evaluate((s) => s.tagName), 'SELECT');
  assert.equal(await form.locator('#m-superseded').getAttribute('type'), 'checkbox');
  assert.equal(await form.locator('#m-source').inputValue(), 'curator');
  assert.equal(await form.locator('#m-author').inputValue(), 'curator');
  await form.locator('#m-tier').selectOption('long-term');
  await form.locator('#m-strength').fill('0.9');
  await form.locator('#m-superseded').check();
  await form.locator('#m-expires').fill('2030-01-01T09:30:00');
  await form.getByLabel('Value of description').fill('Ada prefers coffee, but only in the afternoon — her mornings are for green tea, as she said at length.');
  await shot(page, 'memory-04-edit-form');
  await form.getByTestId('inspector-review').click();
  const kml = inspector.getByTestId('inspector-kml');
  await kml.waitFor();
  const text = await kml.innerText();
  assert.match(text, /source: "curator"/);
  assert.match(text, /author: "curator"/);
  assert.match(text, /memory_tier: "long-term"/);
  assert.match(text, /superseded: true/);

  await inspector.getByTestId('inspector-preview').click();
  const dry = inspector.getByTestId('inspector-dry-run');
  await dry.waitFor();
  // §5: the dry run scrolls into view, and its values wrap between words.
  await page.waitForFunction(() => {
    const body = document.querySelector('[data-testid=inspector] .body');
    const d = document.querySelector('[data-testid=inspector-dry-run]');
    if (!body || !d) return false;
    const b = body.getBoundingClientRect();
    const r = d.getBoundingClientRect();
    return r.top >= b.top - 1 && r.top < b.bottom - 40;
  }, null, { timeout: 5000 });
  const row = dry.locator('[data-testid=diff-row][data-key=description]');
  const widths = await row.evaluate((el) => {
    const vals = el.querySelector('.vals');
    const range = document.createRange();
    range.selectNodeContents(vals);
    // Each line box of the value: a squeezed column gives one word per line.
    const lines = [...range.getClientRects()].map((r) => Math.round(r.top));
    return { width: vals.getBoundingClientRect().width, panel: el.closest('[data-testid=inspector]').getBoundingClientRect().width, lines: new Set(lines).size };
  });
  assert.ok(widths.width > widths.panel * 0.6, `the value column is ${widths.width}px of a ${widths.panel}px inspector`);
  // Two sentences of ~20 words each, before and after: a few lines, not forty.
  assert.ok(widths.lines <= 14, `the description takes ${widths.lines} lines`);
  await shot(page, 'memory-05-dry-run');

  await inspector.getByTestId('inspector-apply').click();
  await kml.waitFor({ state: 'detached' });
  const [meta] = exec('FIND(?p.metadata) WHERE { ?p {type: "Preference", name: "Ada prefers coffee"} }');
  assert.equal(meta.source, 'curator');
  assert.equal(meta.author, 'curator');
  assert.equal(meta.memory_tier, 'long-term');
  assert.equal(meta.memory_strength, 0.9);
  assert.equal(meta.superseded, true);
  assert.ok(Date.parse(meta.expires_at) > Date.parse('2029-12-31T00:00:00Z'), meta.expires_at);
  await inspector.getByTestId('meta-source').filter({ hasText: 'curator' }).waitFor();
  assert.equal(await inspector.getByTestId('expired').count(), 0);
});

test('§4 §11 a list attribute is edited item by item and a long text in a text area; links show their confidence', async () => {
  const inspector = await inspect('Ada Lovelace');
  // §11: each link of a list shows its confidence.
  await inspector.locator('.group-head').filter({ hasText: 'prefers' }).click();
  const confidences = inspector.getByTestId('link-confidence');
  await confidences.first().waitFor();
  assert.deepEqual(await confidences.allInnerTexts(), ['0.8', '0.8']);
  await inspector.getByTestId('inspector-edit').click();
  const form = inspector.getByTestId('inspector-edit-form');
  const strengths = form.locator('[data-testid=edit-attr][data-key=strengths]');
  assert.equal(await strengths.getAttribute('data-kind'), 'list');
  await strengths.getByLabel('Item 2 of strengths', { exact: true }).fill('verse');
  await strengths.getByTestId('edit-list-add').click();
  await strengths.getByLabel('Item 4 of strengths', { exact: true }).fill('analysis');
  await form.getByTestId('inspector-review').click();
  assert.match(await inspector.getByTestId('inspector-kml').innerText(), /strengths: \[\s*"mathematics",\s*"verse",\s*"engines",\s*"analysis"\s*\]/);
  await inspector.getByTestId('inspector-edit').click(); // cancel

  const tea = await inspect('Ada prefers tea');
  await tea.getByTestId('inspector-edit').click();
  const description = tea.getByTestId('inspector-edit-form').locator('[data-testid=edit-attr][data-key=description]');
  assert.equal(await description.getAttribute('data-kind'), 'long');
  assert.equal(await description.getByLabel('Value of description').evaluate((e) => e.tagName), 'TEXTAREA');
  await shot(page, 'memory-06-edit-lists');
  await tea.getByTestId('inspector-edit').click();
});

test('§8 after Enter or Escape in the search box the graph has the keyboard', async () => {
  await page.getByTestId('nav-graph').click();
  const box = page.getByLabel('Search concepts');
  await box.fill('Bob Marley');
  await page.getByRole('option').filter({ hasText: 'Bob Marley' }).first().waitFor();
  await box.press('Enter');
  await page.getByTestId('inspector').getByTestId('inspector-name').filter({ hasText: 'Bob Marley' }).waitFor();
  await page.waitForFunction(() => document.activeElement?.classList.contains('graph-view'));
  // `e` expands the selected concept instead of typing into the box.
  await page.keyboard.press('e');
  await page.getByTestId('predicate-picker').waitFor();
  assert.equal(await box.inputValue(), 'Bob Marley');
  await shot(page, 'memory-09-keyboard');
  await page.keyboard.press('Escape');
  await box.fill('Ada');
  await box.press('Escape');
  await page.waitForFunction(() => document.activeElement?.classList.contains('graph-view'));
  await box.fill('');
});

test('§2 §3 the Trace hides the app’s reads, filters by time of day, names entries by id, and asks before a revert', async () => {
  // A read as the app's own refreshes make them (folded; a process's folds are written when it exits).
  kip(server.db, '--originator', 'curator', 'exec', 'FIND(?x) WHERE { ?x {type: "Person"} }');
  kip(server.db, '--originator', 'agent-m', 'exec',
    'UPSERT { CONCEPT ?p { {type: "Preference", name: "Bob prefers dark mode"} SET ATTRIBUTES { category: "display" } } }');
  await page.getByTestId('nav-trace').click();
  const entries = page.getByTestId('trace-entry');
  const arrived = entries.filter({ hasText: 'UPSERT: updated 1 concept' }).first();
  await arrived.waitFor({ timeout: 15_000 });
  const write = page.locator(`[data-testid=trace-entry][data-id="${await arrived.getAttribute('data-id')}"]`);
  // The app's own refreshes are folded reads: hidden by default, a toggle shows them.
  const messages = () => entries.evaluateAll((els) => els.map((e) => e.textContent));
  assert.ok(!(await messages()).some((m) => /read (once|\d+ times)/.test(m)), 'reads are shown by default');
  await page.getByTestId('trace-hidden-reads').waitFor();
  await page.getByTestId('trace-show-reads').check();
  await page.waitForFunction(() => [...document.querySelectorAll('[data-testid=trace-entry]')].some((e) => /read (once|\d+ times)/.test(e.textContent)));
  await page.getByTestId('trace-show-reads').uncheck();

  // The global id, as messages and refusals name it.
  const id = await write.getAttribute('data-id');
  assert.equal(await write.getByTestId('trace-entry-id').innerText(), id);
  assert.match(await write.locator('.at').innerText(), ONE_FORMAT);

  // Time of day: the last hour has the write, a window from a minute ahead has nothing.
  assert.equal(await page.getByTestId('trace-since').getAttribute('type'), 'datetime-local');
  await page.getByTestId('trace-recent').selectOption('60');
  await write.waitFor();
  assert.match(await page.getByTestId('trace-since').inputValue(), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/);
  const ahead = await page.evaluate(() => {
    const d = new Date(Date.now() + 60_000);
    const p = (n) => String(n).padStart(2, '0');
    return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:00`;
  });
  await page.getByTestId('trace-since').fill(ahead);
  await page.getByTestId('trace-apply').click();
  await write.waitFor({ state: 'detached' });
  await page.getByTestId('trace-since').fill('');
  await page.getByTestId('trace-apply').click();
  await write.waitFor();

  // Revert asks first and shows what it will undo.
  await write.getByTestId('trace-entry-toggle').click();
  await write.getByTestId('trace-outcome').filter({ hasText: '1 concept updated' }).waitFor();
  await write.getByTestId('trace-revert').click();
  const confirm = write.getByTestId('trace-revert-confirm');
  await confirm.waitFor();
  assert.match(await confirm.innerText(), new RegExp(`Revert ${id}\\?`));
  assert.match(await confirm.getByTestId('change-diff').innerText(), /category[\s\S]*UI[\s\S]*display/);
  await shot(page, 'memory-07-revert-confirm');
  assert.deepEqual(exec('FIND(?p.attributes.category) WHERE { ?p {type: "Preference", name: "Bob prefers dark mode"} }'), ['display'], 'nothing reverted before the confirmation');
  await confirm.getByTestId('trace-revert-go').click();
  await page.getByTestId('trace-notice').filter({ hasText: `Reverted ${id}` }).waitFor();
  assert.deepEqual(exec('FIND(?p.attributes.category) WHERE { ?p {type: "Preference", name: "Bob prefers dark mode"} }'), ['UI']);
  // Marked reverted, its Revert button off.
  await write.getByTestId('trace-reverted').filter({ hasText: /reverted by T:\d+/ }).waitFor();
  assert.ok(await write.getByTestId('trace-revert').isDisabled());
  await shot(page, 'memory-08-reverted');
  assert.deepEqual(pageErrors, []);
});
