import { describe, expect, it } from 'vitest';
import {
  asSeries,
  columnIds,
  conceptColumns,
  dayStart,
  defaultForm,
  fieldOf,
  inputParams,
  logicProperties,
  missingInputs,
  resolveRequest,
  showValue,
  toParams,
} from '../../src/lib/logic';
import type { Json, JsonObject } from '../../src/lib/kip';

// The medical example's declaration (capsules/examples/12_medical_logic.kip), trimmed.
const DRUG: JsonObject = {
  logic_properties: {
    indications_added: {
      type: 'metric',
      description: 'Indications added.',
      parameters: [
        { name: 'instant', type: 'BOOLEAN', value_from: 'input', if_system_generate: true },
        { name: 'start', type: 'INTEGER', value_from: 'input', if_system_generate: true },
        { name: 'end', type: 'INTEGER', value_from: 'input', if_system_generate: true },
        { name: 'step', type: 'STRING', value_from: 'input', required: false },
      ],
      data_source: { kind: 'kip', query: 'FIND(COUNT(?l)) WHERE { … }' },
    },
    side_effect_reports: {
      type: 'metric',
      parameters: [
        { name: 'instant', type: 'BOOLEAN', value_from: 'input' },
        { name: 'start', type: 'INTEGER', value_from: 'input' },
        { name: 'end', type: 'INTEGER', value_from: 'input' },
        { name: 'step', type: 'STRING', value_from: 'input', required: false },
        { name: 'min_confidence', type: 'NUMBER', value_from: 'input', description: 'The lowest confidence.' },
      ],
    },
    interaction_check: {
      type: 'operator',
      parameters: [
        { name: 'other_drug', type: 'STRING', value_from: 'input' },
        { name: 'formula', type: 'STRING', value_from: 'property', property: 'molecular_formula' },
        { name: 'source', type: 'STRING', value_from: 'const', value: 'x' },
      ],
      data_source: { kind: 'http', url: 'http://127.0.0.1:8730/interactions' },
    },
    broken: 'not a declaration',
  },
};

const props = logicProperties(DRUG);
const [indications, sideEffects, interaction] = props;
const NOW = Date.UTC(2026, 10, 24, 9, 30); // 2026-11-24

describe('reading a declaration', () => {
  it('keeps metrics and operators in declaration order and skips what is not one', () => {
    expect(props.map((p) => [p.name, p.kind])).toEqual([
      ['indications_added', 'metric'],
      ['side_effect_reports', 'metric'],
      ['interaction_check', 'operator'],
    ]);
    expect(logicProperties({})).toEqual([]);
    expect(logicProperties(undefined)).toEqual([]);
  });

  it('asks only for inputs, the metric window apart', () => {
    expect(inputParams(indications)).toEqual([]);
    expect(inputParams(sideEffects).map((p) => [p.name, p.type, p.required])).toEqual([['min_confidence', 'NUMBER', true]]);
    expect(inputParams(interaction).map((p) => p.name)).toEqual(['other_drug']);
    expect(fieldOf(indications, 'start')).toBe('window');
    expect(fieldOf(interaction, 'other_drug')).toBe('other_drug');
  });
});

describe('the form', () => {
  it('defaults to the last twelve whole months, one value, monthly when a series', () => {
    const f = defaultForm(sideEffects, NOW);
    expect(f).toEqual({ instant: true, start: '2025-12-01', end: '2026-11-24', step: 'month', values: { min_confidence: '' } });
  });

  it('sends the window in ms with the end day included, and the step only for a series', () => {
    const f = { ...defaultForm(indications, NOW), start: '2020-01-01', end: '2024-12-31' };
    expect(toParams(indications, f)).toEqual({
      params: { instant: true, start: Date.UTC(2020, 0, 1), end: Date.UTC(2025, 0, 1) - 1 },
      problems: {},
    });
    f.instant = false;
    f.step = 'year';
    expect(toParams(indications, f).params).toMatchObject({ instant: false, step: 'year' });
  });

  it('leaves blank inputs to the resolver and types the others', () => {
    const f = defaultForm(sideEffects, NOW);
    expect(toParams(sideEffects, f).params).not.toHaveProperty('min_confidence');
    f.values.min_confidence = '0.5';
    expect(toParams(sideEffects, f).params.min_confidence).toBe(0.5);
    f.values.min_confidence = 'high';
    expect(toParams(sideEffects, f).problems).toEqual({ min_confidence: 'not a number' });
  });

  it('refuses a window that ends before it starts, and dates that are not dates', () => {
    const f = { ...defaultForm(indications, NOW), start: '2024-05-01', end: '2024-04-01' };
    expect(toParams(indications, f).problems).toEqual({ end: 'before the start' });
    expect(dayStart('2024-13-45')).toBeNull();
    expect(dayStart('')).toBeNull();
    expect(dayStart('2024-02-29')).toBe(Date.UTC(2024, 1, 29));
  });
});

describe('answers', () => {
  it('reads MISSING_INPUT_PARAMS as property → parameter → hint', () => {
    const error = {
      code: 'MISSING_INPUT_PARAMS',
      data: {
        trace_id: 't',
        missing: [
          { property: 'side_effect_reports', params: [{ name: 'min_confidence', type: 'NUMBER', hint: 'The lowest confidence.' }] },
          { property: 'interaction_check', params: [{ name: 'other_drug', type: 'STRING', hint: 'Which drug?' }] },
        ],
      },
    };
    expect(missingInputs(error)).toEqual({
      side_effect_reports: { min_confidence: 'The lowest confidence.' },
      interaction_check: { other_drug: 'Which drug?' },
    });
    expect(missingInputs({ code: 'KIP_2002', data: { missing: [] } })).toEqual({});
    expect(missingInputs(null)).toEqual({});
  });

  it('tells a series from a value and shows both in one line', () => {
    const series: Json = [
      { t: Date.UTC(2021, 0, 1), value: 1 },
      { t: Date.UTC(2022, 0, 1), value: 0 },
      { t: Date.UTC(2023, 0, 1), value: 1 },
    ];
    expect(asSeries(series)).toHaveLength(3);
    expect(asSeries(2)).toBeNull();
    expect(asSeries([{ risk: 'high' }])).toBeNull();
    expect(showValue(series)).toBe('3 buckets, total 2');
    expect(showValue(1234)).toBe('1,234');
    expect(showValue(null)).toBe('—');
    expect(showValue({ risk: 'high' })).toBe('{"risk":"high"}');
  });

  it('builds the request with ids in order and the properties of the forms', () => {
    const r = resolveRequest('Drug', ['C:1', 'C:2'], { indications_added: { instant: true } });
    expect(r.ot_id).toBe('Drug');
    expect(r.unique_identities).toEqual([{ id: 'C:1' }, { id: 'C:2' }]);
    expect(r.properties).toEqual(['indications_added']);
    expect(r.dynamic_params).toEqual({ indications_added: { instant: true } });
  });
});

describe('batch columns', () => {
  const drug = (id: string, name: string) => ({ _type: 'ConceptNode', id, type: 'Drug', name, attributes: {}, metadata: {} });
  const symptom = { _type: 'ConceptNode', id: 'C:9', type: 'Symptom', name: 'Fever', attributes: {}, metadata: {} };

  it('offers columns whose concepts are all of one type, with their distinct ids', () => {
    const table = {
      columns: ['?d', '?x', 'count'],
      rows: [
        [drug('C:1', 'Aspirin'), drug('C:3', 'Ibuprofen'), 1],
        [drug('C:2', 'Ibuprofen'), symptom, 2],
        [drug('C:1', 'Aspirin'), null, 3],
      ] as Json[][],
    };
    expect(conceptColumns(table)).toEqual([{ index: 0, header: '?d', type: 'Drug', count: 3 }]);
    expect(columnIds(table, 0)).toEqual(['C:1', 'C:2']);
  });
});
