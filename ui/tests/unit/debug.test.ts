import { describe, expect, it } from 'vitest';
import type { Explain, Pattern } from '../../src/transport';
import { applyFix, clauseAt, clauses, layoutPattern, rangeKey, stepSummary, utf16ToByte } from '../../src/lib/console/debug';

const r = (offset: number, length: number) => ({ line: 1, column: offset + 1, offset, length });

// FIND(?d) WHERE { ?d {type: "Drug"} (?d, "treats", {type: "Symptom", name: "头痛"}) NOT { (?d, "x", ?y) } }
const pattern: Pattern = {
  blocks: [
    { id: 0, kind: 'where', range: r(15, 100) },
    { id: 1, kind: 'not', range: r(90, 20), parent: 0 },
  ],
  nodes: [
    { id: 0, var: 'd', kind: 'concept', type: 'Drug', label: '?d', block: 0, clauses: [r(17, 17)] },
    { id: 1, kind: 'concept', type: 'Symptom', name: '头痛', label: 'Symptom "头痛"', block: 0, clauses: [r(50, 30)] },
    { id: 2, var: 'y', kind: 'concept', label: '?y', block: 1, clauses: [] },
  ],
  edges: [
    { id: 0, from: 0, to: 1, predicate: 'treats', clause: r(35, 50), predicate_range: r(40, 8), block: 0 },
    { id: 1, from: 0, to: 2, predicate: 'x', clause: r(92, 14), predicate_range: r(97, 3), block: 1 },
  ],
  filters: [],
};

describe('the query debugger', () => {
  it('finds the innermost clause under a position', () => {
    // Inside the inline term, which is inside the proposition clause.
    expect(clauseAt(pattern, 55)).toBe(rangeKey(r(50, 30)));
    expect(clauseAt(pattern, 36)).toBe(rangeKey(r(35, 50)));
    expect(clauseAt(pattern, 93)).toBe(rangeKey(r(92, 14)));
    expect(clauseAt(pattern, 3)).toBeNull();
  });

  it('links steps and causes to clauses by range', () => {
    const explain: Explain = {
      rows: 0,
      plan: [{ order: 1, kind: 'proposition', clause: r(35, 50), text: '', rows_in: 1, rows_out: 0, time_ms: 0.1, sample: [] }],
      why_empty: [{ clause: r(35, 50), text: '', reason: 'opposite_direction', message: 'm' }],
    };
    const info = clauses(pattern, explain).get(rangeKey(r(35, 50)));
    expect(info?.step?.order).toBe(1);
    expect(info?.cause?.reason).toBe('opposite_direction');
  });

  it('lays the diagram out left to right, the same way every time', () => {
    const a = layoutPattern(pattern);
    expect(a).toEqual(layoutPattern(pattern));
    const [d, symptom, y] = [0, 1, 2].map((id) => a.nodes.find((n) => n.id === id)!);
    expect(symptom.x).toBeGreaterThan(d.x);
    expect(y.x).toBeGreaterThan(d.x);
    expect(y.block).toBe('not');
    expect(a.edges[1].blockKey).toBe(rangeKey(r(90, 20)));
    expect(a.width).toBeGreaterThan(symptom.x);
  });

  it('leaves room between columns for the longest edge label, so no label sits on a box', () => {
    const long: Pattern = {
      ...pattern,
      nodes: [
        { id: 0, var: 'd', kind: 'concept', type: 'Drug', label: '?d', block: 0, clauses: [] },
        { id: 1, var: 's', kind: 'concept', type: 'Symptom', label: '?s', block: 0, clauses: [] },
        { id: 2, var: 'c', kind: 'concept', type: 'DrugClass', label: '?c', block: 0, clauses: [] },
      ],
      edges: [
        { id: 0, from: 0, to: 1, predicate: 'has_side_effect_reported_by_patients', clause: r(1, 1), predicate_range: r(1, 1), block: 0 },
        { id: 1, from: 1, to: 2, predicate: 'x', clause: r(2, 1), predicate_range: r(2, 1), block: 0 },
      ],
      filters: [],
    };
    const a = layoutPattern(long);
    const [d, sym, cls] = [0, 1, 2].map((id) => a.nodes.find((n) => n.id === id)!);
    const gap = (l: typeof d, rgt: typeof d) => rgt.x - rgt.width / 2 - (l.x + l.width / 2);
    // The long label (7 px a character in the diagram's font) fits between the boxes it joins…
    expect(gap(d, sym)).toBeGreaterThanOrEqual('has_side_effect_reported_by_patients'.length * 7);
    // …and a short one keeps the columns close.
    expect(gap(sym, cls)).toBeLessThan(gap(d, sym));
  });

  it('bends parallel edges apart', () => {
    const twice: Pattern = { ...pattern, edges: [pattern.edges[0], { ...pattern.edges[0], id: 1, clause: r(60, 5) }] };
    const lanes = layoutPattern(twice).edges.map((e) => e.lane);
    expect(lanes).toEqual([0, 1]);
  });

  it('applies a fix given in bytes to text with CJK and emoji', () => {
    const text = 'FIND(?d) WHERE { (?d, "treats", {name: "头痛😀"}) ?d {type: "Drg"} }';
    const at = new TextEncoder().encode(text.slice(0, text.indexOf('"Drg"'))).length;
    const fixed = applyFix(text, { range: r(at, 5), replacement: '"Drug"', label: 'Use Drug' });
    expect(fixed).toBe(text.replace('"Drg"', '"Drug"'));
    expect(utf16ToByte(text, text.indexOf('"Drg"'))).toBe(at);
  });

  it('summarises what each kind of step did', () => {
    const base = { order: 1, clause: r(0, 1), text: '', time_ms: 0, sample: [] };
    expect(stepSummary({ ...base, kind: 'not', rows_in: 3, rows_out: 0, detail: { rows_removed: 3 } })).toBe('3 → 0 rows (removed 3)');
    expect(stepSummary({ ...base, kind: 'union', rows_in: 2, rows_out: 3, detail: { branch_rows: 1 } })).toBe('+1 rows from the branch');
    expect(stepSummary({ ...base, kind: 'path', rows_in: 1, rows_out: 1, detail: { nodes_visited: 2, depth_reached: 1 } })).toBe('1 → 1 rows (2 visited, depth 1)');
  });
});
