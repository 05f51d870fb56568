import { describe, expect, it } from 'vitest';
import { GraphModel } from '../../src/lib/graph/model';
import type { ConceptNode, PropositionLink } from '../../src/lib/kip';

const concept = (id: string, type: string, name: string): ConceptNode => ({ _type: 'ConceptNode', id, type, name, attributes: {}, metadata: {} });
const link = (id: string, subject: string, predicate: string, object: string): PropositionLink => ({
  _type: 'PropositionLink', id, subject, predicate, object, attributes: {}, metadata: {},
});

describe('GraphModel', () => {
  it('draws concepts as nodes and propositions as edges, labelled with display hints', () => {
    const g = new GraphModel();
    g.hint = (t) => (t === 'Drug' ? '💊' : undefined);
    g.add([concept('C:1', 'Drug', 'Aspirin'), concept('C:2', 'Symptom', '头痛'), link('P:1', 'C:1', 'treats', 'C:2')]);
    expect(g.graph.order).toBe(2);
    expect(g.graph.getNodeAttribute('C:1', 'label')).toBe('💊 Aspirin');
    expect(g.graph.getNodeAttribute('C:2', 'label')).toBe('头痛');
    expect(g.graph.extremities('P:1')).toEqual(['C:1', 'C:2']);
  });

  it('gives a proposition that another one points at a node of its own, anchored to its ends', () => {
    const g = new GraphModel();
    g.add([
      concept('C:1', 'Drug', 'Aspirin'),
      concept('C:2', 'Symptom', 'Headache'),
      concept('C:3', 'User', '张三'),
      link('P:2', 'C:3', 'stated', 'P:1'),
      link('P:1', 'C:1', 'treats', 'C:2'),
    ]);
    expect(g.graph.getNodeAttribute('P:1', 'kind')).toBe('link');
    expect(g.graph.extremities('P:2')).toEqual(['C:3', 'P:1']);
    expect(g.graph.hasEdge('P:1#s') && g.graph.hasEdge('P:1#o')).toBe(true);
    expect(g.predicateCounts()).toEqual([
      { predicate: 'stated', count: 1 },
      { predicate: 'treats', count: 1 },
    ]);
  });

  it('lists the endpoints it still needs', () => {
    const g = new GraphModel();
    expect(g.missingEndpoints([link('P:1', 'C:1', 'treats', 'C:2'), concept('C:1', 'Drug', 'Aspirin')])).toEqual(['C:2']);
  });

  it('filters by type and predicate, hides, pins and counts', () => {
    const g = new GraphModel();
    g.add([concept('C:1', 'Drug', 'A'), concept('C:2', 'Drug', 'B'), concept('C:3', 'Symptom', 'S'), link('P:1', 'C:1', 'treats', 'C:3')]);
    expect(g.typeCounts().map((t) => [t.type, t.count])).toEqual([['Drug', 2], ['Symptom', 1]]);
    g.toggleType('Drug');
    expect(g.visibleCount()).toBe(1);
    g.toggleType('Drug');
    g.togglePredicate('treats');
    expect(g.graph.getEdgeAttribute('P:1', 'hidden')).toBe(true);
    g.hide('C:2');
    expect(g.visibleCount()).toBe(2);
    g.showAll();
    expect(g.visibleCount()).toBe(3);
    expect(g.togglePin('C:1')).toBe(true);
    expect(g.graph.getNodeAttribute('C:1', 'fixed')).toBe(true);
  });
});
