// The curator's desk (issue 15, "Fix" 1–6), each fix seen in a screenshot:
// what arrives in the graph is visible, marked and framed; fit and labels
// keep clear of the floating panels; the write preview is a diff; the
// Primer's counts are COUNT's; one Chinese character finds names; and the
// smaller fixes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, startBrowser, openPage, shot, settled, clickNode, nodeByLabel, kip } from './harness.mjs';

let server;
let browser;
let page;
let pageErrors;

before(async () => {
  server = await startServer();
  browser = await startBrowser();
  ({ page, pageErrors } = await openPage(browser, server.url));
  await page.waitForFunction(() => window.kipExplorer?.firstGraphPaintMs !== undefined, null, { timeout: 20_000 });
  await settled(page);
});

after(async () => {
  await browser?.close();
  server?.stop();
});

const count = (query) => JSON.parse(kip(server.db, 'exec', query)).result;

const inside = (p, r) => r && p.x >= r.x && p.x <= r.x + r.w && p.y >= r.y && p.y <= r.y + r.h;
const overlap = (a, b) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

async function write(text) {
  await page.locator('.cm-content').click();
  await page.keyboard.press('Control+a');
  await page.keyboard.insertText(text);
}

/** Every visible node's drawn position, with the panels' boxes. */
async function drawn() {
  return page.evaluate(() => {
    const k = window.kipExplorer;
    const nodes = k.graphNodes().filter((n) => !n.hidden).map((n) => ({ ...n, at: k.nodePosition(n.id) }));
    return { nodes, overlays: k.overlays(), labels: k.drawnLabels(), edgeLabels: k.drawnEdgeLabels() };
  });
}

test('1. nodes added while a node is selected arrive visible, marked as new, and framed', async () => {
  await page.getByTestId('nav-graph').click();
  // Start from Aspirin alone, selected.
  await page.getByRole('button', { name: 'Clear', exact: true }).click();
  await page.getByLabel('Search concepts').fill('Aspirin');
  await page.getByRole('option').filter({ hasText: 'Drug' }).first().click();
  await page.waitForFunction(() => window.kipExplorer.graphNodes().length === 1);
  const aspirin = await nodeByLabel(page, 'Aspirin');
  await page.waitForTimeout(4500); // no longer new itself
  await clickNode(page, aspirin.id);
  // Add what the selection does not touch: the TCM herbs, from the Primer.
  await page.getByTestId('nav-primer').click();
  const tcm = page.locator('[data-testid=primer-domain][data-domain=中医药]');
  await tcm.locator('[data-testid=primer-type][data-type=Herb]').click();
  await page.waitForFunction(() => window.kipExplorer.graphNodes().some((n) => n.type === 'Herb'));
  const fresh = await page.evaluate(() => window.kipExplorer.freshNodes());
  assert.ok(fresh.length >= 7, `the herbs are marked new: ${fresh.length}`);
  await shot(page, 'curator-1a-new-nodes-marked');
  await settled(page);
  // Wait until the mark is gone: what arrived must stay visible after it.
  await page.waitForFunction(() => window.kipExplorer.freshNodes().length === 0, null, { timeout: 10_000 });
  await page.waitForTimeout(200);
  const d = await drawn();
  const herbs = d.nodes.filter((n) => n.type === 'Herb');
  assert.equal(herbs.length, 7);
  // Labelled (a dimmed node gets no label), and framed: inside the canvas, clear of the panels.
  const labelled = new Set(d.labels.map((l) => l.id));
  assert.ok(herbs.filter((h) => labelled.has(h.id)).length >= 5, 'the new herbs are labelled, not dimmed');
  const view = await page.getByTestId('graph-canvas').boundingBox();
  for (const h of herbs) {
    assert.ok(h.at.x >= 0 && h.at.y >= 0 && h.at.x <= view.width && h.at.y <= view.height, `${h.label} is in view`);
    assert.ok(!inside(h.at, d.overlays.toolbar) && !inside(h.at, d.overlays.legend), `${h.label} is not under a panel`);
  }
  assert.ok(labelled.has(aspirin.id), 'the selection keeps its label');
  await shot(page, 'curator-1b-new-nodes-visible-and-framed');
});

test('2. fit keeps nodes clear of the toolbar and the legend; labels never overlap', async () => {
  // The medical knowledge joins the herbs.
  const medical = page.locator('[data-testid=primer-domain][data-domain=Medical]');
  for (const type of ['Symptom', 'DrugClass', 'Drug']) {
    await page.getByTestId('nav-primer').click();
    await medical.locator(`[data-testid=primer-type][data-type=${type}]`).click();
    await page.waitForFunction((t) => window.kipExplorer.graphNodes().some((n) => n.type === t), type);
    // The nodes arrive before their links, and the app shows the graph
    // after both: back to the Primer only then, or the switch to the
    // graph lands on top of it.
    await page.locator('[data-testid=nav-graph][aria-current=page]').waitFor();
  }
  await page.getByTestId('nav-graph').click();
  await settled(page);
  await page.locator('.graph-view').focus();
  await page.keyboard.press('Escape');
  const stats = page.getByTestId('graph-stats');
  if ((await stats.getAttribute('aria-expanded')) !== 'true') await stats.click();
  await page.locator('.graph-view').focus();
  await page.keyboard.press('f');
  await page.waitForTimeout(400);
  const d = await drawn();
  assert.ok(d.overlays.legend && d.overlays.toolbar);
  for (const n of d.nodes) {
    assert.ok(!inside(n.at, d.overlays.toolbar), `${n.label} under the toolbar`);
    assert.ok(!inside(n.at, d.overlays.legend), `${n.label} under the legend`);
  }
  // Labels: many placed, none over another or over a panel.
  assert.ok(d.labels.length >= 10, `labels drawn: ${d.labels.length}`);
  for (let i = 0; i < d.labels.length; i++) {
    for (let j = i + 1; j < d.labels.length; j++) assert.ok(!overlap(d.labels[i].box, d.labels[j].box), 'labels overlap');
    assert.ok(!overlap(d.labels[i].box, d.overlays.legend) && !overlap(d.labels[i].box, d.overlays.toolbar), 'a label under a panel');
  }
  await shot(page, '2a-fit-clear-of-panels-labels-placed');
});

test('2. edge labels switch per predicate (auto, always, never)', async () => {
  const before = (await drawn()).edgeLabels;
  const toggle = page.getByTestId('edge-labels-treats');
  assert.equal(await toggle.getAttribute('data-mode'), 'auto');
  await toggle.click(); // on
  await toggle.click(); // off
  assert.equal(await toggle.getAttribute('data-mode'), 'off');
  await page.waitForTimeout(200);
  const without = (await drawn()).edgeLabels;
  assert.ok(without < before || before === 0, `treats labels hidden: ${before} → ${without}`);
  await shot(page, '2b-edge-labels-treats-off');
  await toggle.click(); // auto again
});

test('2. opening the inspector re-centres the selected node in what is left of the view', async () => {
  const headache = await nodeByLabel(page, 'Headache');
  await page.getByTestId('graph-stats').click(); // fold the legend
  await page.keyboard.press('f');
  await page.waitForTimeout(400);
  await clickNode(page, headache.id);
  await page.getByTestId('inspector').waitFor();
  await page.waitForTimeout(500);
  const view = await page.getByTestId('graph-canvas').boundingBox();
  const at = await page.evaluate((id) => window.kipExplorer.nodePosition(id), headache.id);
  assert.ok(at.x > view.width * 0.25 && at.x < view.width * 0.75, `centred across: ${at.x} of ${view.width}`);
  assert.ok(at.y > view.height * 0.25 && at.y < view.height * 0.8, `centred down: ${at.y} of ${view.height}`);
  await shot(page, '2c-inspector-opened-node-centred');
});

test('6. Clear can be undone', async () => {
  const before = (await page.evaluate(() => window.kipExplorer.graphNodes())).length;
  await page.getByRole('button', { name: 'Clear', exact: true }).click();
  await page.waitForFunction(() => window.kipExplorer.graphNodes().length === 0);
  await shot(page, '6a-cleared-with-undo');
  await page.getByTestId('toast-action').filter({ hasText: 'Undo' }).click();
  await page.waitForFunction((n) => window.kipExplorer.graphNodes().length === n, before);
});

test('6. array attributes read as lists, not JSON', async () => {
  await page.getByLabel('Search concepts').fill('麻黄');
  await page.getByRole('option').filter({ hasText: '麻黄' }).filter({ hasText: 'Herb' }).first().click();
  const inspector = page.getByTestId('inspector');
  await inspector.getByTestId('inspector-name').filter({ hasText: '麻黄' }).waitFor();
  const list = inspector.getByTestId('value-list').first();
  await list.waitFor();
  assert.deepEqual(await list.locator('.chip').allInnerTexts(), ['肺经', '膀胱经']);
  assert.doesNotMatch(await inspector.innerText(), /\["肺经"/);
  await shot(page, '6b-array-attribute-as-chips');
});

test('5. one Chinese character finds every concept whose name holds it', async () => {
  const box = page.getByLabel('Search concepts');
  await box.fill('汤');
  const options = page.getByRole('option');
  await options.filter({ hasText: '麻黄汤' }).first().waitFor({ timeout: 10_000 });
  const texts = await options.allInnerTexts();
  assert.ok(texts.some((t) => t.includes('桂枝汤')), texts.join(' | '));
  await shot(page, '5-search-one-character');
  await box.press('Escape');
  await box.fill('');
});

test('4. the Primer counts what COUNT counts, with its own icons and the platform modifier', async () => {
  await page.getByTestId('nav-primer').click();
  const domains = page.locator('[data-testid=primer-domain]');
  await domains.first().waitFor();
  for (const name of ['中医药', 'Medical']) {
    const d = page.locator(`[data-testid=primer-domain][data-domain="${name}"]`);
    let sum = 0;
    for (const t of await d.locator('[data-testid=primer-type]').all()) {
      const type = await t.getAttribute('data-type');
      const shown = Number(await t.getAttribute('data-count'));
      const counted = count(`FIND(COUNT(?x)) WHERE { ?x {type: "${type}"} }`);
      assert.equal(shown, counted, `${name}/${type}`);
      sum += counted;
    }
    assert.match(await d.getByTestId('domain-count').innerText(), new RegExp(`^${sum} concepts`));
  }
  const tcm = page.locator('[data-testid=primer-domain][data-domain=中医药]');
  assert.equal(await tcm.locator('[data-testid=primer-type][data-type=Herb]').getAttribute('data-count'), '7');
  // The modifier of this platform (Linux: Ctrl), not "⌘".
  assert.equal(await tcm.getByTestId('primer-query').first().innerText(), 'Ctrl');
  // Definitions do not share Product's 📦.
  const core = page.locator('[data-testid=primer-domain][data-domain=CoreSchema]');
  // (The type chips; the domain's members by type are another list, issue 33.)
  const def = core.locator('[data-testid=primer-type][data-type="$ConceptType"]');
  if (await def.count()) assert.doesNotMatch(await def.innerText(), /📦/);
  assert.match(await page.locator('[data-testid=primer-domain][data-domain=Medical] [data-testid=primer-type][data-type=Product]').innerText(), /📦/);
  await shot(page, '4-primer-counts');
});

test('3. the write preview is a diff with names, types and before → after; Apply leaves a readable summary', async () => {
  await page.getByTestId('nav-console').click();
  await write(`UPSERT {
  CONCEPT ?d { {type: "Drug", name: "Naproxen"} SET ATTRIBUTES { risk_level: 2 } SET PROPOSITIONS { ("treats", {type: "Symptom", name: "Headache"}) } }
  CONCEPT { {type: "Drug", name: "Aspirin"} SET ATTRIBUTES { risk_level: 3 } }
}`);
  await page.keyboard.press('Control+Enter');
  const dialog = page.getByTestId('kml-preview');
  await dialog.waitFor();
  assert.equal(await page.getByTestId('kml-summary').innerText(), 'This creates 1 concept and 1 link, changes 1 concept.');
  const created = dialog.locator('[data-testid=change][data-op=created][data-kind=concept]');
  assert.match(await created.innerText(), /Drug[\s\S]*Naproxen/);
  const link = dialog.locator('[data-testid=change][data-kind=proposition]');
  assert.match(await link.innerText(), /Naproxen —treats→ Headache/);
  const changed = dialog.locator('[data-testid=change][data-op=updated]');
  assert.match(await changed.innerText(), /Aspirin[\s\S]*risk_level\s*2\s*→\s*3/);
  await shot(page, '3a-write-preview-diff');
  await page.getByTestId('kml-apply').click();
  await dialog.waitFor({ state: 'detached' });
  const summary = page.getByTestId('applied-summary');
  await summary.waitFor();
  assert.match(await summary.innerText(), /Applied\. This write creates 1 concept and 1 link, changes 1 concept\./);
  assert.match(await summary.innerText(), /Naproxen —treats→ Headache/);
  assert.equal(count('FIND(COUNT(?d)) WHERE { ?d {type: "Drug", name: "Naproxen"} }'), 1);
  await shot(page, '3b-applied-summary');
});

test('6. History shows when each command ran and wraps between words', async () => {
  await page.getByRole('tab', { name: /History/ }).click();
  const entry = page.getByTestId('history-entry').first();
  await entry.waitFor();
  // With its time zone, as every time the UI shows (issue 33 §9).
  assert.match(await entry.getByTestId('history-time').innerText(), /^\d{2}:\d{2} \S+$/);
  const style = await entry.locator('code').evaluate((el) => getComputedStyle(el).wordBreak);
  assert.equal(style, 'normal');
  // A variable's sigil is joined to its name: no line breaks `?pref` after the `?` (issue 33 §13).
  const texts = await page.getByTestId('history-entry').locator('code').allTextContents();
  assert.ok(texts.some((t) => /\?\u2060\w/.test(t)), texts.join('\n'));
  for (const t of texts) assert.doesNotMatch(t, /\?(?!\u2060)\w/);
  await shot(page, '6c-history-with-times');
});

test('6. the highlighted completion row keeps its detail readable', async () => {
  await write('FIND(?x) WHERE { ?x {type: "D');
  await page.keyboard.press('Control+Space');
  const selected = page.locator('.cm-tooltip-autocomplete li[aria-selected]');
  await selected.waitFor();
  const detail = selected.locator('.cm-completionDetail');
  if (await detail.count()) {
    const [fg, bg] = await detail.evaluate((el) => [getComputedStyle(el).color, getComputedStyle(el.closest('li')).backgroundColor]);
    assert.notEqual(fg, bg);
    assert.match(fg, /rgba?\(255, 255, 255/);
  }
  await shot(page, '6d-completion-detail-readable');
  await page.keyboard.press('Escape');
});

test('6. the debugger diagram keeps a highlighted node\'s count badge', async () => {
  await write('FIND(?d.name) WHERE {\n  ?d {type: "Drug"}\n  (?d, "treats", ?s)\n}');
  await page.keyboard.press('Control+Shift+Enter');
  const badge = page.getByTestId('node-count').first();
  await badge.waitFor({ timeout: 10_000 });
  const node = page.locator('.node', { has: badge });
  await node.hover();
  const fill = await badge.evaluate((t) => getComputedStyle(t.previousElementSibling).fill);
  const text = await badge.evaluate((t) => getComputedStyle(t).fill);
  assert.notEqual(fill, text, 'badge text and its background differ');
  await shot(page, '6e-debugger-badge-on-hover');
});

test('6. the inspector folds in the console, and the console remembers it', async () => {
  // The console starts with the inspector folded (it needs the width).
  await page.getByTestId('inspector-unfold').waitFor();
  await page.getByTestId('inspector-unfold').click();
  await page.getByTestId('inspector').waitFor();
  await page.getByTestId('inspector-fold').click();
  await page.getByTestId('inspector-unfold').waitFor();
  // The graph view keeps its own choice: open.
  await page.getByTestId('nav-graph').click();
  await page.getByTestId('inspector').waitFor();
  await page.getByTestId('nav-console').click();
  await page.getByTestId('inspector-unfold').waitFor();
  await shot(page, '6f-console-with-inspector-folded');
});

test('6. an import problem shows its code and opens the file at its line', async () => {
  await page.getByTestId('nav-import').click();
  await page.locator('input[type=file]').setInputFiles({
    name: 'broken.kip',
    mimeType: 'text/plain',
    buffer: Buffer.from('// a broken capsule\nUPSERT {\n  CONCEPT ?x {\n    {type: "Symptom" name: "X"}\n  }\n}\n'),
  });
  const link = page.getByTestId('problem-link').first();
  await link.waitFor();
  assert.match(await link.innerText(), /broken\.kip:4:\d+/);
  assert.match(await page.getByTestId('problem-code').first().innerText(), /KIP_\d{4}/);
  await link.click();
  const viewer = page.getByTestId('file-viewer');
  await viewer.waitFor();
  assert.match(await viewer.getByTestId('viewer-line').innerText(), /4\s*\{type: "Symptom" name: "X"\}/);
  await shot(page, '6g-import-problem-opened-at-line');
  // Escape closes it, without a click inside first (issue 33 §8).
  await page.keyboard.press('Escape');
  await viewer.waitFor({ state: 'detached' });
  assert.deepEqual(pageErrors, []);
});
