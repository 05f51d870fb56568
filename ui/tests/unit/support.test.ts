import { describe, expect, it } from 'vitest';
import { byteToUtf16, declaredType, attributeKeys } from '../../src/lib/console/assist';
import { historyPreview, loadHistory, pushHistory, searchHistory } from '../../src/lib/history';
import { typeColor } from '../../src/lib/colors';
import { toProblem, toReport } from '../../src/transport/reports';
import type { TypeDef } from '../../src/lib/state.svelte';

describe('byteToUtf16', () => {
  it('maps UTF-8 byte offsets to JavaScript string indices', () => {
    const text = 'FIND(?x) WHERE { ?x {name: "张三"} ?y 🤖 }';
    const at = (s: string) => new TextEncoder().encode(text.slice(0, text.indexOf(s))).length;
    expect(byteToUtf16(text, at('"张三"'))).toBe(text.indexOf('"张三"'));
    expect(byteToUtf16(text, at('?y'))).toBe(text.indexOf('?y'));
    expect(byteToUtf16(text, at(' }'))).toBe(text.indexOf(' }'));
  });
});

describe('completion helpers', () => {
  it('finds the type a variable is declared with', () => {
    expect(declaredType('FIND(?d) WHERE { ?d {type: "Drug"} }', 'd')).toBe('Drug');
    expect(declaredType('FIND(?d) WHERE { ?d {name: "x"} }', 'd')).toBeNull();
  });
  it('lists attribute keys from instance schemas', () => {
    const types = [
      { name: 'Drug', instanceSchema: { risk_level: {}, description: {} } },
      { name: 'Symptom', instanceSchema: { severity: {} } },
    ] as TypeDef[];
    expect(attributeKeys(types, 'Drug')).toEqual(['description', 'risk_level']);
    expect(attributeKeys(types, null)).toEqual(['description', 'risk_level', 'severity']);
  });
});

describe('history', () => {
  it('keeps newest first, de-duplicates and searches by every term', () => {
    const store = new Map<string, string>();
    const storage = { getItem: (k: string) => store.get(k) ?? null, setItem: (k: string, v: string) => void store.set(k, v) };
    let h = pushHistory([], { text: 'FIND(?a)', at: '1', ok: true }, storage);
    h = pushHistory(h, { text: 'DESCRIBE PRIMER', at: '2', ok: true }, storage);
    h = pushHistory(h, { text: 'FIND(?a)', at: '3', ok: false }, storage);
    expect(h.map((e) => e.at)).toEqual(['3', '2']);
    expect(loadHistory(storage).length).toBe(2);
    expect(searchHistory(h, 'describe primer').map((e) => e.text)).toEqual(['DESCRIBE PRIMER']);
  });
});

describe('typeColor', () => {
  it('is stable per type name', () => {
    expect(typeColor('Drug')).toBe(typeColor('Drug'));
    expect(typeColor('Drug')).toMatch(/^#[0-9a-f]{6}$/);
  });
});

describe('import reports', () => {
  it('reads kip-capsule errors with their positions', () => {
    const r = toReport(
      { file: 'b.yaml', status: 'failed', errors: [{ code: 'KIP_2001', message: 'bad', path: '[1].type', line: 3, column: 9, hint: 'fix it' }] },
      'x',
    );
    expect(r.errors[0]).toEqual({ message: 'bad', hint: 'fix it', code: 'KIP_2001', line: 3, column: 9, path: '[1].type' });
  });
  it('turns an API error into a failed report', () => {
    expect(toReport({ error: { code: 'API_IO', message: 'gone', hint: 'h' } }, 'f.kip').status).toBe('failed');
    expect(toProblem('plain').message).toBe('plain');
  });
});

describe('watch status', () => {
  it('reads the files of kip-api watch_status with their errors as problems', async () => {
    const { toWatchView } = await import('../../src/transport/reports');
    const view = toWatchView({
      folder: '/caps',
      ready: true,
      files: [{ path: '/caps/b.yaml', status: 'failed', errors: [{ code: 'KIP_2001', message: 'bad', line: 1, column: 9, hint: 'h' }] }],
    });
    expect(view.files[0].errors[0]).toMatchObject({ message: 'bad', line: 1, column: 9 });
  });
});

describe('history preview', () => {
  it('collapses spaces, cuts long queries and never breaks a variable after its sigil', () => {
    const p = historyPreview('FIND(?pref)\n  WHERE { ?pref {type: "Preference"} ?p {name: :who} }');
    expect(p).toBe('FIND(?\u2060pref) WHERE { ?\u2060pref {type: "Preference"} ?\u2060p {name: :\u2060who} }');
    // What a person reads and copies is the query minus the joiners.
    expect(p.replaceAll('\u2060', '')).toBe('FIND(?pref) WHERE { ?pref {type: "Preference"} ?p {name: :who} }');
    expect(historyPreview('x'.repeat(300)).length).toBe(140);
    // A colon before a space or a quote is left alone.
    expect(historyPreview('{type: "A"}')).toBe('{type: "A"}');
  });
});
