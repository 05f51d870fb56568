import { describe, expect, it } from 'vitest';
import { GraphModel } from '../../src/lib/graph/model';
import { describeFilter, passes, ready, sceneKeys, type PropertyFilter } from '../../src/lib/graph/property-filter';
import { paletteColor, PALETTES } from '../../src/lib/graph/palettes';
import { grouped, hierarchical, radial } from '../../src/lib/graph/layouts';
import { scaleColor } from '../../src/lib/graph/styling';
import type { ConceptNode, JsonObject, PropositionLink } from '../../src/lib/kip';

const concept = (id: string, type: string, name: string, metadata: JsonObject = {}, attributes: JsonObject = {}): ConceptNode => ({ _type: 'ConceptNode', id, type, name, attributes, metadata });
const link = (id: string, subject: string, predicate: string, object: string): PropositionLink => ({ _type: 'PropositionLink', id, subject, predicate, object, attributes: {}, metadata: {} });
const filter = (f: Partial<PropertyFilter>): PropertyFilter => ({ key: 'confidence', op: '<', value: '0.5', scope: 'nodes', mode: 'dim', ...f });

describe('property filter', () => {
  const doubtful = concept('C:1', 'Drug', 'Aspirin', { confidence: 0.3, expires_at: '2020-01-01T00:00:00Z' }, { risk_level: 2 });
  const sure = concept('C:2', 'Drug', 'Ibuprofen', { confidence: 0.8 }, { risk_level: 3 });
  const bare = concept('C:3', 'Drug', 'Paracetamol');
  it('compares numbers as numbers, text as text, and knows expired', () => {
    expect([doubtful, sure, bare].map((e) => passes(filter({}), e))).toEqual([true, false, false]);
    expect(passes(filter({ key: 'risk_level', op: '=', value: '3' }), sure)).toBe(true);
    expect(passes(filter({ key: 'risk_level', op: '!=', value: '3' }), sure)).toBe(false);
    expect([doubtful, sure].map((e) => passes(filter({ op: 'expired' }), e))).toEqual([true, false]);
    expect(passes(filter({ key: 'expires_at', op: 'has' }), bare)).toBe(false);
    // Links are outside a concepts-only filter: they pass.
    expect(passes(filter({}), link('P:1', 'C:1', 'treats', 'C:2'))).toBe(true);
  });
  it('offers the keys the scene holds, and says itself in words', () => {
    expect(sceneKeys([doubtful, sure, bare], 'nodes').slice(0, 2)).toEqual(['name', 'type']);
    expect(sceneKeys([doubtful, sure, bare], 'nodes')).toEqual(expect.arrayContaining(['confidence', 'expires_at', 'risk_level']));
    expect(describeFilter(filter({}))).toBe('confidence < 0.5');
    expect(ready(filter({ value: '' }))).toBe(false);
    expect(ready(filter({ op: 'expired', key: '' }))).toBe(true);
  });
});

describe('palettes', () => {
  it('run from their first stop to their last, changing hue on the way', () => {
    expect(paletteColor('viridis', 0)).toBe(PALETTES.viridis.stops[0]);
    expect(paletteColor('viridis', 1)).toBe(PALETTES.viridis.stops.at(-1));
    expect(scaleColor({ id: 'r', on: 'property', name: 'confidence', scale: 'color', palette: 'viridis' }, 0.4)).not.toBe(
      scaleColor({ id: 'r', on: 'property', name: 'confidence', scale: 'color', palette: 'viridis' }, 0.95),
    );
  });
});

describe('layouts', () => {
  const g = new GraphModel();
  g.add([
    concept('C:1', 'Drug', 'Aspirin'),
    concept('C:2', 'DrugClass', 'NSAID'),
    concept('C:3', 'DrugClass', 'Analgesic'),
    concept('C:4', 'Symptom', 'Fever'),
    link('P:1', 'C:1', 'is_class_of', 'C:2'),
    link('P:2', 'C:2', 'is_subclass_of', 'C:3'),
    link('P:3', 'C:1', 'treats', 'C:4'),
  ]);
  it('hierarchical: each link goes down a layer', () => {
    const at = hierarchical(g.graph);
    for (const [s, t] of [['C:1', 'C:2'], ['C:2', 'C:3'], ['C:1', 'C:4']]) expect(at.get(t)!.y).toBeLessThan(at.get(s)!.y);
    expect(at.get('C:2')!.y).toBe(at.get('C:4')!.y);
  });
  it('radial: the centre at the origin, its neighbours on one ring, the next further out', () => {
    const at = radial(g.graph, 'C:1');
    const r = (id: string) => Math.hypot(at.get(id)!.x, at.get(id)!.y);
    expect(r('C:1')).toBe(0);
    expect(r('C:2')).toBeCloseTo(r('C:4'));
    expect(r('C:3')).toBeGreaterThan(r('C:2'));
  });
  it('grouped: one cluster per type', () => {
    const at = grouped(g.graph);
    const d = (a: string, b: string) => Math.hypot(at.get(a)!.x - at.get(b)!.x, at.get(a)!.y - at.get(b)!.y);
    expect(d('C:2', 'C:3')).toBeLessThan(d('C:2', 'C:1'));
    expect(d('C:2', 'C:3')).toBeLessThan(d('C:3', 'C:4'));
  });
});
