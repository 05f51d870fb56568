// Issue 15, "Add" 7–12: styling rules, saved queries, exports, multiple
// selection and undo, path marks, the time window — the pure parts.
import { describe, expect, it } from 'vitest';
import { GraphModel, PATH_COLOR } from '../../src/lib/graph/model';
import { describeRule, mix, readRules, ruleJson, SCALE_START, styleOf, type StyleRule } from '../../src/lib/graph/styling';
import { queriesFromKip, queriesToKip, readQueries, searchQueries, upsertQuery, type SavedQuery } from '../../src/lib/saved-queries';
import { cellText, tableCsv, tableTsv } from '../../src/lib/export';
import { insidePolygon, lassoed, nearest, toggle } from '../../src/lib/graph/selection';
import { stamps } from '../../src/lib/time-window';
import type { ConceptNode, JsonObject, PropositionLink } from '../../src/lib/kip';

const concept = (id: string, type: string, name: string, attributes: JsonObject = {}, metadata: JsonObject = {}): ConceptNode => ({
  _type: 'ConceptNode', id, type, name, attributes, metadata,
});
const link = (id: string, subject: string, predicate: string, object: string, metadata: JsonObject = {}): PropositionLink => ({
  _type: 'PropositionLink', id, subject, predicate, object, attributes: {}, metadata,
});

const drugs = () => [
  concept('C:1', 'Drug', 'Aspirin', { risk_level: 2 }),
  concept('C:2', 'Drug', 'Ibuprofen', { risk_level: 3 }),
  concept('C:3', 'Drug', 'Mefenamic Acid', { risk_level: 4 }),
  concept('C:4', 'Symptom', 'Headache'),
  link('P:1', 'C:1', 'treats', 'C:4', { confidence: 0.9 }),
  link('P:2', 'C:2', 'treats', 'C:4', { confidence: 0.5 }),
];

describe('styling rules', () => {
  it('colour a type, caption it by a property, and a later rule wins', () => {
    const rules: StyleRule[] = [
      { id: 'a', on: 'type', name: 'Drug', color: '#112233', caption: 'risk_level' },
      { id: 'b', on: 'property', name: 'risk_level', min: 4, color: '#ff0000', size: 20 },
    ];
    const base = { color: '#000000', size: 7, label: 'x' };
    const [aspirin, , mefenamic, headache] = drugs();
    expect(styleOf(aspirin, base, rules, new Map())).toEqual({ color: '#112233', size: 7, label: '2' });
    expect(styleOf(mefenamic, base, rules, new Map())).toEqual({ color: '#ff0000', size: 20, label: '4' });
    expect(styleOf(headache, base, rules, new Map())).toEqual(base);
  });

  it('scale size by risk_level over the values shown, and colour by a link metadata key', () => {
    const g = new GraphModel();
    g.add(drugs());
    g.setStyleRules([
      { id: 's', on: 'property', name: 'risk_level', scale: 'size' },
      { id: 'c', on: 'property', name: 'confidence', scale: 'color', color: '#d62728', min: 0, max: 1 },
    ]);
    expect(g.graph.getNodeAttribute('C:1', 'size')).toBe(4); // the smallest risk shown
    expect(g.graph.getNodeAttribute('C:3', 'size')).toBe(22); // the largest
    expect(g.graph.getNodeAttribute('C:2', 'size')).toBeCloseTo(13);
    expect(g.graph.getEdgeAttribute('P:1', 'color')).toBe(mix(SCALE_START, '#d62728', 0.9));
    expect(g.graph.getEdgeAttribute('P:2', 'color')).toBe(mix(SCALE_START, '#d62728', 0.5));
    // Without rules, the type's own look comes back.
    g.setStyleRules([]);
    expect(g.graph.getEdgeAttribute('P:1', 'color')).toBe('#9aa3b5');
  });

  it('a predicate rule styles its links; a type rule gives the legend its colour', () => {
    const g = new GraphModel();
    g.add(drugs());
    g.setStyleRules([
      { id: 'p', on: 'predicate', name: 'treats', color: '#00aa00', size: 4, caption: 'confidence' },
      { id: 't', on: 'type', name: 'Symptom', color: '#0000ff' },
    ]);
    expect(g.graph.getEdgeAttributes('P:1')).toMatchObject({ color: '#00aa00', size: 4, label: '0.9' });
    expect(g.typeCounts().find((t) => t.type === 'Symptom')?.color).toBe('#0000ff');
  });

  it('read back from the setting, dropping what is malformed, and describe themselves', () => {
    const rules: StyleRule[] = [{ id: 'x', on: 'property', name: 'risk_level', equals: '3', color: '#ff0000' }];
    const stored = rules.map(ruleJson);
    expect(readRules([...stored, { on: 'nothing', name: 'x' }, 5, null])).toEqual(rules);
    expect(describeRule(rules[0])).toBe('risk_level = 3: colour #ff0000');
    expect(describeRule({ id: 'y', on: 'property', name: 'risk_level', scale: 'size' })).toBe('risk_level: size by value');
    expect(describeRule({ id: 'z', on: 'property', name: 'confidence', only: 'links', scale: 'color', color: '#d62728' })).toBe('confidence (links): colour by value');
    // A links-only rule leaves concepts with the same key alone.
    const base = { color: '#000000', size: 7, label: 'x' };
    const rule: StyleRule = { id: 'z', on: 'property', name: 'confidence', only: 'links', color: '#ff0000' };
    expect(styleOf(concept('C:9', 'Drug', 'A', {}, { confidence: 1 }), base, [rule], new Map())).toEqual(base);
    expect(styleOf(link('P:9', 'C:1', 'treats', 'C:2', { confidence: 1 }), base, [rule], new Map()).color).toBe('#ff0000');
  });
});

describe('saved queries', () => {
  const q = (name: string, text = 'FIND(?d) WHERE { ?d {type: :t} }'): SavedQuery => ({ name, description: `finds ${name}`, text, parameters: { t: '"Drug"' } });

  it('replace a query of the same name, sorted, and filter by words', () => {
    let list = upsertQuery([], q('drugs'));
    list = upsertQuery(list, q('all'));
    list = upsertQuery(list, { ...q('drugs'), description: 'newer' });
    expect(list.map((x) => x.name)).toEqual(['all', 'drugs']);
    expect(list[1].description).toBe('newer');
    expect(searchQueries(list, 'NEWER').map((x) => x.name)).toEqual(['drugs']);
    expect(readQueries([{ name: 'a', text: 'FIND(?x) WHERE { ?x {type: "Drug"} }', parameters: { n: 1 } }, { name: 3 }])).toEqual([
      { name: 'a', description: '', text: 'FIND(?x) WHERE { ?x {type: "Drug"} }', parameters: {} },
    ]);
  });

  it('export as a .kip file that reads back the same', () => {
    const list = [q('drugs'), { name: 'multi\nline', description: '', text: 'FIND(?s)\nWHERE {\n  ?s {type: "Symptom"}\n}', parameters: {} }];
    const file = queriesToKip(list);
    expect(file).toContain('// @query drugs\n// @description finds drugs\n// @param :t = "Drug"\nFIND(?d)');
    expect(queriesFromKip(file)).toEqual([list[0], { ...list[1], name: 'multi line' }]);
  });
});

describe('exports', () => {
  const table = {
    columns: ['drug', 'note'],
    rows: [
      [concept('C:1', 'Drug', 'Aspirin'), 'says "hi", twice'],
      [link('P:1', 'C:1', 'treats', 'C:4'), { a: 1 }],
      [null, 'line\nbreak'],
    ],
  };
  it('write tables as RFC 4180 CSV and as tab-separated text', () => {
    expect(tableCsv(table)).toBe('drug,note\r\nAspirin,"says ""hi"", twice"\r\ntreats,"{""a"":1}"\r\n,"line\nbreak"\r\n');
    expect(tableTsv(table)).toBe('drug\tnote\nAspirin\tsays "hi", twice\ntreats\t{"a":1}\n\tline break');
    expect(cellText(3)).toBe('3');
  });
});

describe('multiple selection, undo and marks', () => {
  it('lasso and shift-click geometry', () => {
    const square = [{ x: 0, y: 0 }, { x: 10, y: 0 }, { x: 10, y: 10 }, { x: 0, y: 10 }];
    expect(insidePolygon({ x: 5, y: 5 }, square)).toBe(true);
    expect(insidePolygon({ x: 15, y: 5 }, square)).toBe(false);
    const nodes = [{ id: 'a', at: { x: 2, y: 2 } }, { id: 'b', at: { x: 20, y: 2 } }, { id: 'c', at: null }];
    expect(lassoed(nodes, square)).toEqual(['a']);
    expect(nearest(nodes, { x: 19, y: 3 })).toBe('b');
    expect(nearest(nodes, { x: 40, y: 40 })).toBe(null);
    expect(toggle(toggle(['a'], 'b'), 'a')).toEqual(['b']);
  });

  it('every graph action is undone and redone, several nodes in one step', () => {
    const g = new GraphModel();
    g.add(drugs());
    expect(g.canUndo).toBe(true);
    g.togglePins(['C:1', 'C:2']);
    g.hideAll(['C:3', 'C:4']);
    g.removeAll(['C:1']);
    expect(g.graph.hasNode('C:1')).toBe(false);
    g.undo();
    expect(g.graph.hasNode('C:1')).toBe(true);
    expect(g.hiddenNodes.size).toBe(2);
    g.undo();
    expect(g.hiddenNodes.size).toBe(0);
    g.undo();
    expect(g.graph.getNodeAttribute('C:1', 'fixed')).toBeFalsy();
    g.redo();
    expect(g.graph.getNodeAttribute('C:2', 'fixed')).toBe(true);
    g.undo();
    g.undo();
    expect(g.graph.order).toBe(0);
    expect(g.canUndo).toBe(false);
    // A refresh after another process's write is no step of the curator's.
    g.redo();
    const before = g.canUndo;
    g.quietly(() => g.remove('C:4'));
    expect(g.canUndo).toBe(before);
  });

  it('mark a path and filter by a time window', () => {
    const g = new GraphModel();
    g.add([
      concept('C:1', 'Drug', 'Old', {}, { _updated_at: '2024-01-01T00:00:00Z' }),
      concept('C:2', 'Drug', 'New', {}, { _updated_at: '2025-06-01T00:00:00Z' }),
      concept('C:3', 'Symptom', 'Unstamped'),
      link('P:1', 'C:1', 'treats', 'C:3'),
    ]);
    g.showPaths(['C:1', 'C:3'], ['P:1']);
    expect(g.graph.getEdgeAttribute('P:1', 'color')).toBe(PATH_COLOR);
    expect([...g.marked]).toEqual(['C:1', 'C:3']);
    expect(stamps([...g.elements.values()].map((e) => e.metadata), '_updated_at')).toEqual(['2024-01-01T00:00:00Z', '2025-06-01T00:00:00Z']);
    g.setTimeWindow({ field: '_updated_at', from: '2025-01-01T00:00:00Z', to: '2025-12-31T00:00:00Z' });
    expect(g.graph.getNodeAttribute('C:1', 'hidden')).toBe(true);
    expect(g.graph.getNodeAttribute('C:2', 'hidden')).toBeFalsy();
    expect(g.graph.getNodeAttribute('C:3', 'hidden')).toBeFalsy();
    g.setTimeWindow(null);
    expect(g.visibleCount()).toBe(3);
  });
});
