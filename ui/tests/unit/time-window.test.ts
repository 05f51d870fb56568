import { describe, expect, it } from 'vitest';
import { batchResults, boundsQuery, changedIds, countQuery, isoSeconds, overallBounds, sinceMoment, stampAt, stampWindow } from '../../src/lib/time-window';

describe('the Primer time window', () => {
  it('asks one MIN/MAX and one COUNT per type, the names quoted', () => {
    expect(boundsQuery(['Drug', 'A"B'], '_updated_at').split('\n')).toEqual([
      'FIND(MIN(?x.metadata._updated_at), MAX(?x.metadata._updated_at)) WHERE { ?x {type: "Drug"} }',
      'FIND(MIN(?x.metadata._updated_at), MAX(?x.metadata._updated_at)) WHERE { ?x {type: "A\\"B"} }',
    ]);
    expect(countQuery(['Herb'], '_created_at', '2026-01-01T00:00:00Z', '2026-02-01T00:00:00Z')).toBe(
      'FIND(COUNT(?x)) WHERE { ?x {type: "Herb"} FILTER(?x.metadata._created_at >= "2026-01-01T00:00:00Z" && ?x.metadata._created_at <= "2026-02-01T00:00:00Z") }',
    );
    expect(countQuery(['Herb'], '_updated_at', '2026-01-01T00:00:00Z')).toContain('FILTER(?x.metadata._updated_at >= "2026-01-01T00:00:00Z")');
  });

  it('reads a batch, one command unwrapped', () => {
    expect(batchResults(7, 1)).toEqual([7]);
    expect(batchResults([{ result: 6 }, { result: 7 }], 2)).toEqual([6, 7]);
  });

  it('spans every type and steps between the ends', () => {
    expect(overallBounds([['2026-01-02T00:00:00Z', '2026-01-05T00:00:00Z'], [null, null], ['2026-01-01T00:00:00Z', '2026-01-03T00:00:00Z']])).toEqual({
      min: '2026-01-01T00:00:00Z',
      max: '2026-01-05T00:00:00Z',
    });
    expect(overallBounds([[null, null]])).toBeNull();
    expect(stampAt('2026-01-01T00:00:00Z', '2026-01-03T00:00:00Z', 0, 200)).toBe('2026-01-01T00:00:00Z');
    expect(stampAt('2026-01-01T00:00:00Z', '2026-01-03T00:00:00Z', 100, 200)).toBe('2026-01-02T00:00:00Z');
    expect(stampAt('2026-01-01T00:00:00Z', '2026-01-03T00:00:00Z', 200, 200)).toBe('2026-01-03T00:00:00Z');
  });

  it('names the moment a "changed since" choice stands for', () => {
    const now = Date.parse('2026-01-02T00:00:00.500Z');
    expect(sinceMoment('1h', now).toISOString()).toBe('2026-01-01T23:00:00.500Z');
    expect(isoSeconds(sinceMoment('1d', now))).toBe('2026-01-01T00:00:00Z');
    expect(sinceMoment('2025-05-01T00:00:00Z', now).toISOString()).toBe('2025-05-01T00:00:00.000Z');
  });
});

describe('the graph time window', () => {
  const list = ['2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z', '2026-01-03T00:00:00Z'];

  it('is none while the sliders span every stamp, or there is one stamp only', () => {
    expect(stampWindow(list, 0, Number.MAX_SAFE_INTEGER, '_updated_at')).toBeNull();
    expect(stampWindow(list.slice(0, 1), 0, 0, '_updated_at')).toBeNull();
  });

  it('runs between the stamps the sliders point at, never backwards', () => {
    expect(stampWindow(list, 1, 99, '_created_at')).toEqual({ field: '_created_at', from: list[1], to: list[2] });
    expect(stampWindow(list, 2, 0, '_updated_at')).toEqual({ field: '_updated_at', from: list[2], to: list[2] });
  });

  it('finds the shown elements changed since a moment', () => {
    const el = (id: string, at: string) => ({ _type: 'ConceptNode' as const, id, type: 'T', name: id, attributes: {}, metadata: { _updated_at: at } });
    const elements = [el('a', list[0]), el('b', list[1]), el('c', list[2])];
    expect(changedIds(elements, '_updated_at', list[1], (id) => id !== 'c')).toEqual(['b']);
  });
});
