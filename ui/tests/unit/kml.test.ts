import { describe, expect, it } from 'vitest';
import { deleteKml, editToKml, parseField } from '../../src/lib/kml';

const drug = { _type: 'ConceptNode' as const, id: 'C:1', type: 'Drug', name: 'Aspirin', attributes: { risk_level: 2 }, metadata: {} };
const link = { _type: 'PropositionLink' as const, id: 'P:9', subject: 'C:1', predicate: 'treats', object: 'C:2', attributes: {}, metadata: {} };

describe('editToKml', () => {
  it('writes changed attributes and metadata as one UPSERT', () => {
    const kml = editToKml(drug, { set: { risk_level: 3, 'odd key': '是' }, remove: [], metadata: { confidence: 0.9 } });
    expect(kml).toBe(
      'UPSERT {\n  CONCEPT ?e {\n    {type: "Drug", name: "Aspirin"}\n    SET ATTRIBUTES {\n      risk_level: 3,\n      "odd key": "是"\n    }\n  }\n  WITH METADATA {\n    confidence: 0.9\n  }\n}',
    );
  });
  it('removes attributes with DELETE ATTRIBUTES', () => {
    expect(editToKml(drug, { set: {}, remove: ['risk_level'], metadata: {} })).toBe(
      'DELETE ATTRIBUTES {"risk_level"} FROM ?e\nWHERE {\n  ?e {type: "Drug", name: "Aspirin"}\n}',
    );
  });
  it('addresses propositions by their endpoints', () => {
    expect(editToKml(link, { set: { onset_minutes: 30 }, remove: [], metadata: {} })).toContain('PROPOSITION ?e {\n    ({id: "C:1"}, "treats", {id: "C:2"})');
  });
  it('is empty when nothing changed', () => {
    expect(editToKml(drug, { set: {}, remove: [], metadata: {} })).toBe('');
  });
});

describe('deleteKml', () => {
  it('detaches concepts and deletes propositions by id', () => {
    expect(deleteKml(drug)).toBe('DELETE CONCEPT ?e DETACH\nWHERE {\n  ?e {type: "Drug", name: "Aspirin"}\n}');
    expect(deleteKml(link)).toBe('DELETE PROPOSITIONS ?e\nWHERE {\n  ?e (id: "P:9")\n}');
  });
});

describe('parseField', () => {
  it('reads JSON, else keeps text', () => {
    expect(parseField('3')).toBe(3);
    expect(parseField('[1, "a"]')).toEqual([1, 'a']);
    expect(parseField('plain words')).toBe('plain words');
  });
});
