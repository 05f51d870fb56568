import { describe, expect, it } from 'vitest';
import { collectElements, findHeaders, toTable, lit, conceptRef } from '../../src/lib/kip';

const aspirin = { _type: 'ConceptNode', id: 'C:1', type: 'Drug', name: 'Aspirin', attributes: {}, metadata: {} };
const link = { _type: 'PropositionLink', id: 'P:1', subject: 'C:1', predicate: 'treats', object: 'C:2', attributes: {}, metadata: {} };

describe('toTable', () => {
  it('turns columnar FIND results into rows', () => {
    const t = toTable([['Aspirin', 'Ibuprofen'], [2, 1]], ['?d.name', 'COUNT(?s)']);
    expect(t.columns).toEqual(['?d.name', 'COUNT(?s)']);
    expect(t.rows).toEqual([['Aspirin', 2], ['Ibuprofen', 1]]);
  });
  it('keeps a single unwrapped column as one column', () => {
    expect(toTable(['Aspirin', 'Ibuprofen'], ['?d.name']).rows).toEqual([['Aspirin'], ['Ibuprofen']]);
  });
  it('keeps a single column of arrays as one column when the query has one expression', () => {
    expect(toTable([['a', 'b'], ['c', 'd']], ['?d.attributes.aliases']).rows).toEqual([[['a', 'b']], [['c', 'd']]]);
  });
  it('shows a scalar aggregate as one cell', () => {
    expect(toTable(5, ['COUNT(?x)'])).toEqual({ columns: ['COUNT(?x)'], rows: [[5]] });
  });
  it('shows several aggregates as one row', () => {
    expect(toTable([5, 3], ['COUNT(?x)', 'COUNT(?y)']).rows).toEqual([[5, 3]]);
  });
});

describe('findHeaders', () => {
  it('splits the FIND expressions on top-level commas', () => {
    expect(findHeaders('FIND(?d.name, COUNT(?s), ?x) WHERE { }')).toEqual(['?d.name', 'COUNT(?s)', '?x']);
  });
  it('ignores commas and parentheses inside strings', () => {
    expect(findHeaders('FIND(?a, "x, (y") WHERE {}')).toEqual(['?a', '"x, (y"']);
  });
  it('is empty for other commands', () => {
    expect(findHeaders('DESCRIBE PRIMER')).toEqual([]);
  });
});

describe('collectElements', () => {
  it('finds every concept and proposition once, wherever it is nested', () => {
    const found = collectElements([[aspirin, aspirin], [{ nested: link }]] as never);
    expect([...found.keys()]).toEqual(['C:1', 'P:1']);
  });
});

describe('literals', () => {
  it('quotes names, including CJK and quotes', () => {
    expect(lit('张三 "x"')).toBe('"张三 \\"x\\""');
    expect(conceptRef({ type: 'User', name: '张三' })).toBe('{type: "User", name: "张三"}');
  });
});
