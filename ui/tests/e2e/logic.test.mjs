// Logic properties in the app (BRIEF §8, issue 14): the inspector lists a
// concept's logic properties from its type (the medical example's two
// metrics and operator on Drug, capsules/examples/12_medical_logic.kip),
// computes a value and a series chart, highlights the inputs a
// MISSING_INPUT_PARAMS answer names, shows an operator's failure when its
// service is down; the console computes them for a whole result column.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, startBrowser, openPage, shot } from './harness.mjs';

let server;
let browser;
let page;
let pageErrors;

before(async () => {
  server = await startServer();
  browser = await startBrowser();
  ({ page, pageErrors } = await openPage(browser, server.url));
});

after(async () => {
  await browser?.close();
  server?.stop();
});

async function inspect(name) {
  await page.getByTestId('nav-graph').click();
  await page.getByLabel('Search concepts').fill(name);
  await page.getByRole('option').filter({ hasText: name }).filter({ hasText: 'Drug' }).first().click();
  const inspector = page.getByTestId('inspector');
  await inspector.getByTestId('inspector-name').filter({ hasText: name }).waitFor({ timeout: 10_000 }).catch(async (e) => {
    await shot(page, `debug-logic-inspect-${name}`);
    throw e;
  });
  return inspector;
}

async function window(scope, property, start, end) {
  await scope.getByTestId(`logic-start-${property}`).fill(start);
  await scope.getByTestId(`logic-end-${property}`).fill(end);
}

test('the inspector computes a metric as a value, then as a series chart with hover values', async () => {
  const inspector = await inspect('Aspirin');
  const section = inspector.getByTestId('logic-properties');
  await section.waitFor({ timeout: 10_000 });
  assert.match(await section.innerText(), /Logic properties · 3/i);
  for (const p of ['indications_added', 'side_effect_reports', 'interaction_check']) {
    await section.getByTestId(`logic-${p}`).waitFor();
  }
  const card = section.getByTestId('logic-indications_added');
  // Aspirin gained Headache (2021-03-10) and Fever (2023-07-01).
  await window(card, 'indications_added', '2020-01-01', '2024-12-31');
  await card.getByTestId('logic-compute-indications_added').click();
  const value = card.getByTestId('logic-value-indications_added');
  await value.waitFor({ timeout: 10_000 });
  assert.equal((await value.innerText()).trim(), '2');
  await card.scrollIntoViewIfNeeded();
  await shot(page, 'logic-01-inspector-value');

  await card.getByTestId('logic-series-indications_added').check();
  await card.getByTestId('logic-step-indications_added').selectOption('year');
  await card.getByTestId('logic-compute-indications_added').click();
  const chart = card.getByTestId('series-chart');
  await chart.waitFor({ timeout: 10_000 });
  assert.equal(await chart.getAttribute('data-points'), '5', 'one bucket per year, 2020 to 2024');
  // Hovering the 2021 bucket shows its date and value in the legend.
  const over = chart.locator('.u-over');
  const box = await over.boundingBox();
  await page.mouse.move(box.x + box.width * 0.25, box.y + box.height / 2);
  const legend = chart.locator('.u-legend');
  await page.waitForFunction(() => /2021-01-01/.test(document.querySelector('[data-testid=series-chart] .u-legend')?.textContent ?? ''));
  assert.match(await legend.innerText(), /2021-01-01[\s\S]*indications_added\s*1\b/);
  await shot(page, 'logic-02-inspector-series');
});

test('a missing input is highlighted from the MISSING_INPUT_PARAMS answer', async () => {
  const inspector = await inspect('Ibuprofen');
  const card = inspector.getByTestId('logic-side_effect_reports');
  await card.waitFor({ timeout: 10_000 });
  await window(card, 'side_effect_reports', '2024-01-01', '2024-12-31');
  await card.getByTestId('logic-compute-side_effect_reports').click();
  const error = card.getByTestId('logic-error-side_effect_reports');
  await error.waitFor({ timeout: 10_000 });
  assert.match(await error.innerText(), /MISSING_INPUT_PARAMS/);
  const field = card.getByTestId('logic-param-side_effect_reports-min_confidence');
  assert.equal(await field.getAttribute('data-missing'), 'true');
  await card.scrollIntoViewIfNeeded();
  await shot(page, 'logic-03-missing-input');

  await field.locator('input').fill('0.5');
  await card.getByTestId('logic-compute-side_effect_reports').click();
  const value = card.getByTestId('logic-value-side_effect_reports');
  await value.waitFor({ timeout: 10_000 });
  assert.equal((await value.innerText()).trim(), '1');
  assert.equal(await field.getAttribute('data-missing'), null, 'the highlight went with the answer');
});

test('an operator whose service is down says so', async () => {
  const inspector = await inspect('Aspirin');
  const card = inspector.getByTestId('logic-interaction_check');
  await card.waitFor({ timeout: 10_000 });
  await card.getByTestId('logic-param-interaction_check-other_drug').locator('input').fill('Ibuprofen');
  await card.getByTestId('logic-compute-interaction_check').click();
  const error = card.getByTestId('logic-error-interaction_check');
  await error.waitFor({ timeout: 20_000 });
  assert.match(await error.innerText(), /LOGIC_OPERATOR_FAILED/);
  await card.scrollIntoViewIfNeeded();
  await shot(page, 'logic-04-operator-down');
});

test('the console computes logic properties for every concept of a result column', async () => {
  await page.getByTestId('nav-console').click();
  await page.locator('.cm-content').click();
  await page.keyboard.press('Control+a');
  await page.keyboard.insertText('FIND(?d) WHERE { ?d {type: "Drug"} } ORDER BY ?d.name');
  await page.keyboard.press('Escape');
  await page.keyboard.press('Control+Enter');
  await page.getByTestId('result-meta').waitFor({ timeout: 10_000 });
  const rows = Number(/(\d+) rows?/.exec(await page.getByTestId('result-meta').innerText())[1]);
  await page.getByTestId('logic-batch-open').click();
  const batch = page.getByTestId('logic-batch');
  await batch.waitFor();
  await batch.getByTestId('logic-form-indications_added').waitFor({ timeout: 10_000 });
  await window(batch, 'indications_added', '2020-01-01', '2024-12-31');
  await batch.getByTestId('logic-batch-pick-side_effect_reports').check();
  await window(batch, 'side_effect_reports', '2020-01-01', '2024-12-31');
  await batch.getByTestId('logic-series-side_effect_reports').check();
  await batch.getByTestId('logic-step-side_effect_reports').selectOption('year');
  await batch.getByTestId('logic-param-side_effect_reports-min_confidence').locator('input').fill('0.5');
  await batch.getByTestId('logic-batch-run').click();
  const table = batch.getByTestId('logic-batch-table');
  await table.waitFor({ timeout: 10_000 });
  const head = await table.locator('thead th').allInnerTexts();
  assert.deepEqual(head, ['Drug', 'indications_added', 'side_effect_reports']);
  const body = await table.locator('tbody tr').allInnerTexts();
  assert.equal(body.length, rows, 'one row per concept of the column');
  const aspirin = body.find((r) => r.startsWith('Aspirin'));
  assert.match(aspirin, /Aspirin\s+2\s+5 buckets, total 1/);
  assert.equal(await table.getByTestId('series-chart').count(), rows, 'a sparkline per series');
  await table.scrollIntoViewIfNeeded();
  await shot(page, 'logic-05-console-batch');
  assert.deepEqual(pageErrors, []);
});
