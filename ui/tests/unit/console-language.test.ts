import { describe, expect, it } from 'vitest';
import { EditorState } from '@codemirror/state';
import { CompletionContext } from '@codemirror/autocomplete';
import { FUNCTIONS, KEYWORDS, tokenize } from '../../src/lib/console/kip-language';
import { kipCompletion, type SchemaSource } from '../../src/lib/console/assist';
import type { Transport } from '../../src/transport';

const style = (line: string, text: string) => tokenize(line).find(([t]) => t === text)?.[1];

describe('highlighting of the RC9–RC10 statements', () => {
  it('colours UPDATE, its SETs and update expressions', () => {
    const line = 'UPDATE ?p SET METADATA { confidence: CLAMP(MUL(?p.metadata.confidence, :f), 0.0, 1.0) } WHERE { ?p {type: "Preference"} } LIMIT 5';
    expect(style(line, 'UPDATE')).toBe('keyword');
    expect(style(line, 'METADATA')).toBe('keyword');
    expect(style(line, 'CLAMP')).toBe('variableName.function');
    expect(style(line, 'MUL')).toBe('variableName.function');
    expect(style(line, ':f')).toBe('variableName.special');
  });
  it('colours MERGE … INTO, EXPECT VERSION, EXPORT and SEARCH … MODE / THRESHOLD', () => {
    expect(style('MERGE CONCEPT ?dup INTO ?canonical', 'MERGE')).toBe('keyword');
    expect(style('MERGE CONCEPT ?dup INTO ?canonical', 'INTO')).toBe('keyword');
    expect(style('EXPECT VERSION :v', 'EXPECT')).toBe('keyword');
    expect(style('EXPECT VERSION :v', 'VERSION')).toBe('keyword');
    expect(style('EXPORT ?n WHERE { } CURSOR "x"', 'EXPORT')).toBe('keyword');
    const search = 'SEARCH CONCEPT "headache relief" MODE "semantic" THRESHOLD 0.75 LIMIT 10';
    expect(style(search, 'MODE')).toBe('keyword');
    expect(style(search, 'THRESHOLD')).toBe('keyword');
    expect(style(search, '0.75')).toBe('number');
  });
  it('offers the new keywords and update expressions for completion', () => {
    for (const k of ['UPDATE', 'MERGE', 'INTO', 'EXPECT VERSION', 'EXPORT', 'MODE', 'THRESHOLD']) expect(KEYWORDS).toContain(k);
    for (const f of ['ADD', 'MUL', 'CLAMP', 'COALESCE']) expect(FUNCTIONS).toContain(f);
  });
});

describe('completion of the RC9–RC10 statements', () => {
  const source: SchemaSource = {
    types: () => [],
    predicates: () => [],
    transport: () => ({}) as Transport,
  };
  const complete = async (doc: string) => {
    const ctx = new CompletionContext(EditorState.create({ doc }), doc.length, true);
    const r = await kipCompletion(source)(ctx);
    return r?.options.map((o) => o.label) ?? [];
  };
  it('lists the search modes inside MODE "…"', async () => {
    expect(await complete('SEARCH CONCEPT "aspirin" MODE "')).toEqual(['keyword', 'semantic', 'hybrid']);
  });
  it('lists the engine keys _version and _merged_from after .metadata.', async () => {
    const labels = await complete('UPSERT { CONCEPT { {type: "Drug", name: "A"} EXPECT VERSION ?d.metadata.');
    expect(labels).toContain('_version');
    expect(labels).toContain('_merged_from');
  });
  it('completes UPDATE and MERGE as keywords', async () => {
    expect(await complete('UPD')).toContain('UPDATE');
    expect(await complete('MERGE CONCEPT ?a IN')).toContain('INTO');
  });
});

describe('a keyword before a placeholder', () => {
  it('stays a keyword instead of turning into an object key', () => {
    expect(style('FIND(?x) WHERE { ?x {type: "Drug"} } LIMIT :limit', 'LIMIT')).toBe('keyword');
    expect(style('SEARCH CONCEPT :term THRESHOLD :t', 'THRESHOLD')).toBe('keyword');
    expect(style('{name: :n}', 'name')).toBe('propertyName');
  });
});
