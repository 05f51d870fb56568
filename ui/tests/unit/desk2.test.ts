// Issue 33, the pure parts: one time format with its zone, the edit form's
// typed fields and the curator's provenance, the Trace's reads, reverts
// and outcomes in words.
import { describe, expect, it } from 'vitest';
import { formatTime, fromLocalInput, isIsoTime, isPast, toLocalInput } from '../../src/lib/time';
import { attrDraft, draftValue, formEdit, kindOf, metaForm } from '../../src/lib/edit-form';
import { describeOutcome, isRead, revertedBy } from '../../src/lib/trace';
import type { TraceEntry } from '../../src/transport/generated/kip-api';

describe('time', () => {
  it('shows one format with the zone', () => {
    expect(formatTime('2026-11-27T20:26:43Z', { timeZone: 'UTC' })).toBe('2026-11-27 20:26:43 UTC');
    expect(formatTime('2026-11-27T20:26:43Z', { timeZone: 'Asia/Tokyo' })).toBe('2026-11-28 05:26:43 GMT+9');
    expect(formatTime('2026-11-27T20:26:43Z', { timeZone: 'UTC', seconds: false })).toBe('2026-11-27 20:26 UTC');
    expect(formatTime(undefined)).toBe('—');
    expect(formatTime('not a time')).toBe('not a time');
  });

  it('knows an ISO time and a past one', () => {
    expect(isIsoTime('2026-01-01T00:00:00Z')).toBe(true);
    expect(isIsoTime('2026-01-01T00:00:00.123+02:00')).toBe(true);
    expect(isIsoTime('2026-01-01')).toBe(false);
    expect(isIsoTime('Ada')).toBe(false);
    const now = Date.parse('2026-06-01T00:00:00Z');
    expect(isPast('2026-01-01T00:00:00Z', now)).toBe(true);
    expect(isPast('2027-01-01T00:00:00Z', now)).toBe(false);
  });

  it('round-trips a datetime-local value to the second', () => {
    const local = toLocalInput('2026-11-27T20:26:43Z');
    expect(local).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/);
    expect(fromLocalInput(local)).toBe('2026-11-27T20:26:43Z');
    expect(fromLocalInput('')).toBe('');
  });
});

describe('the edit form', () => {
  const stamp = { source: 'curator', author: 'ada' };
  const meta = { source: 'conversation:1', author: '$self', confidence: 0.4, memory_tier: 'short-term', expires_at: '2026-01-01T00:00:00Z' };

  it('picks an input by value', () => {
    expect(kindOf('short')).toBe('text');
    expect(kindOf('x'.repeat(61))).toBe('long');
    expect(kindOf('a\nb')).toBe('long');
    expect(kindOf(3)).toBe('number');
    expect(kindOf(true)).toBe('bool');
    expect(kindOf(['a', 1])).toBe('list');
    expect(kindOf([{ a: 1 }])).toBe('json');
  });

  it('edits a list item by item, keeping strings strings', () => {
    const d = attrDraft('tags', ['a', 'b']);
    d.items = ['a', '2', ' ', 'c'];
    expect(draftValue(d)).toEqual(['a', '2', 'c']);
    const n = attrDraft('ns', [1, 2]);
    n.items = ['1', '3'];
    expect(draftValue(n)).toEqual([1, 3]);
  });

  it('writes nothing when nothing changed, not even the provenance', () => {
    const form = metaForm(meta, stamp);
    const e = formEdit({ a: 'x' }, meta, [attrDraft('a', 'x')], form, stamp, 'now');
    expect(e).toEqual({ set: {}, remove: [], metadata: {} });
  });

  it('records the curator with any change, and the lifecycle typed', () => {
    const form = metaForm(meta, stamp);
    form.memory_tier = 'long-term';
    form.memory_strength = '0.9';
    form.superseded = true;
    form.expires_at = '';
    const e = formEdit({}, meta, [], form, stamp, '2026-11-27T00:00:00Z');
    expect(e.metadata).toEqual({
      source: 'curator',
      author: 'ada',
      memory_tier: 'long-term',
      memory_strength: 0.9,
      superseded: true,
      superseded_at: '2026-11-27T00:00:00Z',
      expires_at: null,
    });
  });
});

const entry = (data: Record<string, unknown>): TraceEntry =>
  ({ id: 'T:1', originator: 'curator', type: 'TRACE', seq: '1', message: 'm', tag: [], flags: [], at: '2026-01-01T00:00:00Z', data }) as unknown as TraceEntry;

describe('the Trace', () => {
  it('knows a folded read and a reverted entry', () => {
    expect(isRead(entry({ read_only: true, count: 3 }))).toBe(true);
    expect(isRead(entry({ outcome: {} }))).toBe(false);
    expect(revertedBy(entry({ reverted_by: 'T:9' }))).toBe('T:9');
    expect(revertedBy(entry({}))).toBeUndefined();
  });

  it('says an outcome in words', () => {
    expect(describeOutcome({ concepts_created: 3, concepts_updated: 0, propositions_created: 1 })).toBe('3 concepts created, 1 link created');
    expect(describeOutcome({ concepts_updated: 1 })).toBe('1 concept updated');
    expect(describeOutcome({ error: 'KIP_2001' })).toBe('failed with KIP_2001');
    expect(describeOutcome({ concepts_created: 0 })).toBe('nothing changed');
  });
});
