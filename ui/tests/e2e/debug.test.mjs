// The console's query debugger in headless Chromium against a real
// `kip serve`: for every query of the engine's why-empty corpus
// (crates/kip-nexus/tests/data/why_empty), the failing clause is marked in
// the editor and the diagram with the engine's reason; a one-click fix
// makes the query return rows; a working query shows its plan and counts;
// the diagram and the editor light each other up. Screenshots
// `debug-*.png` under ui/test-results/screenshots.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { startServer, startBrowser, openPage, shot, repo, kipBin } from './harness.mjs';

const corpus = join(repo, 'crates/kip-nexus/tests/data/why_empty');

// What each query of the corpus gets wrong (the engine's reason codes).
const EXPECTED = {
  clauses_that_do_not_join: 'no_join',
  filter_wrong_case: 'filter_removed_all',
  misspelt_name: 'similar_name',
  misspelt_predicate: 'unknown_predicate',
  misspelt_type: 'unknown_type',
  name_under_another_type: 'name_under_other_type',
  not_removes_everything: 'not_removed_all',
  over_strict_filter: 'filter_removed_all',
  path_too_short: 'path_too_short',
  wrong_case: 'name_differs_in_case_or_spacing',
  wrong_direction: 'opposite_direction',
};

let server;
let browser;
let page;
let pageErrors;

before(async () => {
  server = await startServer();
  browser = await startBrowser();
  ({ page, pageErrors } = await openPage(browser, server.url));
  await page.waitForFunction(() => window.kipExplorer?.graphNodes);
  await page.getByTestId('nav-console').click();
});

after(async () => {
  await browser?.close();
  server?.stop();
  assert.deepEqual(pageErrors, [], 'no uncaught errors in the page');
});

/** The engine's own response to `kip exec ARGS…`, also when it is a KIP error. */
function kipExec(...args) {
  let out;
  try {
    out = execFileSync(kipBin, ['--db', server.db, 'exec', ...args], { encoding: 'utf8' });
  } catch (e) {
    out = e.stdout; // a KIP error exits 1 and still prints its response
  }
  return JSON.parse(out);
}

/** The engine's own explain of a query, through the command line. */
const engineExplain = (query) => kipExec('--explain', query).explain;

async function setQuery(text) {
  await page.locator('.cm-content').click();
  await page.keyboard.press('Control+a');
  await page.keyboard.insertText(text);
  // Let the debounced validation finish, so the diagram follows the text.
  await page.waitForFunction(() => !document.querySelector('[data-testid=editor-state]')?.textContent?.includes('Checking'));
  await page.waitForTimeout(450);
  await page.waitForFunction(() => !document.querySelector('[data-testid=editor-state]')?.textContent?.includes('Checking'));
}

const squash = (s) => s.replace(/\s+/g, ' ').trim();

for (const file of readdirSync(corpus).filter((f) => f.endsWith('.kip')).sort()) {
  const name = file.replace(/\.kip$/, '');
  test(`why empty: ${name} — the failing clause is marked with its reason`, async () => {
    assert.ok(EXPECTED[name], `add ${name} to EXPECTED`);
    const query = readFileSync(join(corpus, file), 'utf8');
    const engine = engineExplain(query);
    const [cause] = engine.why_empty;
    assert.equal(cause.reason, EXPECTED[name], 'the engine names the expected reason');

    await setQuery(query);
    await page.keyboard.press('Control+Enter');
    // An empty (or refused) FIND opens the debugger by itself.
    const shown = page.locator('[data-testid=cause]').first();
    await shown.waitFor({ timeout: 15_000 });
    assert.equal(await shown.getAttribute('data-reason'), EXPECTED[name]);
    assert.equal(await page.getByTestId('tab-debug').getAttribute('aria-selected'), 'true');

    // The editor marks exactly the clause the engine names.
    const marked = await page.locator('.cm-kip-fail').allTextContents();
    assert.equal(squash(marked.join(' ')), squash(cause.text));
    // …and so does the diagram: some node, edge, FILTER or block is red.
    const failing = await page.locator('[data-testid=diagram] .fail, [data-testid=diagram-block].fail').count();
    assert.ok(failing > 0, 'the diagram marks the failing clause');
    // A fix button is offered exactly when the engine has one.
    assert.equal(await page.getByTestId('apply-fix').count(), cause.fix ? 1 : 0);
    await shot(page, `debug-${name}`);
  });
}

test('a one-click fix rewrites the clause and the query then returns rows', async () => {
  await setQuery(readFileSync(join(corpus, 'wrong_direction.kip'), 'utf8'));
  await page.keyboard.press('Control+Enter');
  await page.getByTestId('apply-fix').click();
  // The fix's own run, not the answer of the run it overtook.
  await page.waitForFunction(() => /^[1-9]\d* rows?$/.test(document.querySelector('[data-testid=why-title]')?.textContent?.trim() ?? ''));
  assert.match(await page.getByTestId('why-title').innerText(), /^[1-9]\d* rows?$/);
  const editor = await page.locator('.cm-content').innerText();
  assert.match(editor, /\(\?d, "treats", \{type: "Symptom", name: "Headache"\}\)/);
  assert.equal(await page.locator('.cm-kip-fail').count(), 0, 'nothing is marked red any more');
  await shot(page, 'debug-fixed');
});

test('a working query shows the plan in run order, rows per clause and sample bindings', async () => {
  const query = 'FIND(?d.name, ?s.name)\nWHERE {\n  ?d {type: "Drug"}\n  (?d, "treats", ?s)\n  ?s {type: "Symptom", name: "Fever"}\n  FILTER(?d.attributes.risk_level < 3)\n}';
  const engine = engineExplain(query);
  await setQuery(query);
  await page.keyboard.press('Control+Shift+Enter');
  await page.getByTestId('plan').waitFor();
  const steps = await page.getByTestId('plan-step').allInnerTexts();
  assert.equal(steps.length, engine.plan.length);
  // Same order as the engine: the named symptom first.
  assert.match(steps[0], /Fever/);
  assert.match(await page.getByTestId('why-title').innerText(), new RegExp(`^${engine.rows} rows?$`));
  // Counts on the diagram: the treats edge shows its rows.
  const treats = engine.plan.find((s) => s.kind === 'proposition');
  assert.ok((await page.getByTestId('edge-count').allTextContents()).includes(`${treats.rows_out} ${treats.rows_out === 1 ? 'row' : 'rows'}`));
  // Clicking a step shows what its variables were bound to.
  await page.getByTestId('plan-step').nth(1).click();
  const samples = await page.getByTestId('samples').innerText();
  assert.match(samples, /\?d/);
  assert.match(samples, /Drug: /);
  await shot(page, 'debug-working-query');
});

test('the diagram and the editor light each other up', async () => {
  const query = 'FIND(?d.name)\nWHERE {\n  ?d {type: "Drug"}\n  (?d, "is_class_of", {type: "DrugClass", name: "NSAID"})\n}';
  await setQuery(query);
  await page.getByTestId('tab-debug').click();
  // Hovering the edge highlights its clause in the editor.
  await page.getByTestId('diagram-edge').first().hover();
  await page.waitForFunction(() => document.querySelector('.cm-kip-hover'));
  assert.equal(squash((await page.locator('.cm-kip-hover').allTextContents()).join(' ')), '(?d, "is_class_of", {type: "DrugClass", name: "NSAID"})');
  // Hovering the clause's text in the editor highlights the diagram's edge.
  await page.locator('.cm-line', { hasText: 'is_class_of' }).getByText('is_class_of').hover();
  await page.waitForFunction(() => document.querySelector('[data-testid=diagram-edge].hover'));
  await shot(page, 'debug-hover');
});

test('a syntax error appears in the debugger at the position the engine reports', async () => {
  // Non-ASCII text before the error: the engine's column counts characters, as the editor does.
  const query = 'FIND(?d.name)\nWHERE {\n  ?d {type: "Drug", name: "降压药" ?x\n}';
  const { error } = kipExec(query);
  assert.equal(error.code, 'KIP_1001');
  await setQuery(query);
  await page.getByTestId('tab-debug').click();
  const problem = page.getByTestId('debug-problem').first();
  await problem.waitFor();
  assert.match(await problem.innerText(), new RegExp(`KIP_1001 at ${error.data.line}:${error.data.column}`));
  // The editor's lint mark starts at that very line and column (issue 33 §13: one position for one error).
  await page.locator('.cm-lintRange-error').first().waitFor();
  const marked = await page.evaluate(() => {
    const mark = document.querySelector('.cm-lintRange-error');
    const line = mark.closest('.cm-line');
    const lines = [...document.querySelectorAll('.cm-content .cm-line')];
    const range = document.createRange();
    range.setStart(line, 0);
    range.setEndBefore(mark);
    return { line: lines.indexOf(line) + 1, column: range.toString().length + 1 };
  });
  assert.deepEqual(marked, { line: error.data.line, column: error.data.column });
  await shot(page, 'debug-syntax-error');
});
