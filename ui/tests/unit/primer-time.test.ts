import { describe, expect, it } from 'vitest';
import { batchResults, boundsQuery, countQuery, overallBounds, stampAt } from '../../src/lib/primer-time';

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
});
