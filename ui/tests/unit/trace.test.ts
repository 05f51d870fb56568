// The Trace view's helpers: sessions by originator and inactivity, JSON Lines.
import { describe, expect, it } from 'vitest';
import { createdRanges, groupSessions, inRanges, rangeIds, rangeLabel, summariseCreated, toJsonl, SESSION_GAP_MS } from '../../src/lib/trace';
import type { TraceEntry } from '../../src/transport/generated/kip-api';

const entry = (id: number, originator: string, at: string): TraceEntry => ({
  id: `T:${id}`,
  originator,
  type: 'TRACE',
  seq: String(id),
  message: `m${id}`,
  tag: [],
  flags: [],
  at,
});

describe('groupSessions', () => {
  it('groups an originator’s entries into sessions split by a gap of inactivity', () => {
    // Newest first, as the timeline lists them.
    const entries = [
      entry(5, 'a', '2026-01-01T12:00:00Z'),
      entry(4, 'b', '2026-01-01T11:59:00Z'),
      entry(3, 'a', '2026-01-01T11:55:00Z'),
      entry(2, 'a', '2026-01-01T10:00:00Z'),
      entry(1, 'b', '2026-01-01T09:00:00Z'),
    ];
    const groups = groupSessions(entries);
    expect(groups.map((g) => [g.originator, g.entries.map((e) => e.id)])).toEqual([
      ['a', ['T:5', 'T:3']],
      ['b', ['T:4']],
      ['a', ['T:2']],
      ['b', ['T:1']],
    ]);
    expect(groups[0].first).toBe('2026-01-01T11:55:00Z');
    expect(groups[0].last).toBe('2026-01-01T12:00:00Z');
    expect(SESSION_GAP_MS).toBe(600_000);
  });

  it('writes one entry per line with the seed’s field names', () => {
    const text = toJsonl([entry(1, 'a', '2026-01-01T00:00:00Z')]);
    expect(text.endsWith('\n')).toBe(true);
    expect(Object.keys(JSON.parse(text))).toEqual(['id', 'originator', 'type', 'seq', 'message', 'tag', 'flags', 'at']);
    expect(toJsonl([])).toBe('');
  });
});

describe('created ranges of a bulk write', () => {
  const bulk = (created: unknown): TraceEntry => ({ ...entry(9, 'importer', '2026-01-01T00:00:00Z'), data: { changes: [], created } });

  it('reads data.created into ranges and says what was created, with counts and ids', () => {
    const ranges = createdRanges(bulk([['C:5', 'C:2004'], ['P:1', 'P:1999']]));
    expect(ranges).toEqual([
      { kind: 'concept', prefix: 'C', first: 5, last: 2004, count: 2000 },
      { kind: 'proposition', prefix: 'P', first: 1, last: 1999, count: 1999 },
    ]);
    expect(summariseCreated(ranges)).toBe('created 2,000 concepts (C:5 … C:2004) and 1,999 links (P:1 … P:1999)');
    expect(summariseCreated(ranges.slice(0, 1))).toBe('created 2,000 concepts (C:5 … C:2004)');
    expect(summariseCreated([])).toBe('');
    expect(rangeLabel({ kind: 'concept', prefix: 'C', first: 7, last: 7, count: 1 })).toBe('C:7');
  });

  it('finds the range an id lies in, and lists a range’s first ids', () => {
    const ranges = createdRanges(bulk([['C:5', 'C:2004'], ['P:1', 'P:1999']]));
    expect(inRanges(ranges, 'C:5')?.prefix).toBe('C');
    expect(inRanges(ranges, 'C:2004')?.last).toBe(2004);
    expect(inRanges(ranges, 'C:2005')).toBeUndefined();
    expect(inRanges(ranges, 'P:1999')?.kind).toBe('proposition');
    expect(inRanges(ranges, 'T:3')).toBeUndefined();
    expect(rangeIds(ranges[0], 3)).toEqual(['C:5', 'C:6', 'C:7']);
    expect(rangeIds({ kind: 'concept', prefix: 'C', first: 1, last: 2, count: 2 }, 200)).toEqual(['C:1', 'C:2']);
  });

  it('ignores entries without ranges and malformed pairs', () => {
    expect(createdRanges(entry(1, 'a', '2026-01-01T00:00:00Z'))).toEqual([]);
    expect(createdRanges(bulk('C:1'))).toEqual([]);
    expect(createdRanges(bulk([['C:1', 'P:3'], ['C:9', 'C:2'], ['x', 'y'], ['C:1'], ['C:3', 'C:4']]))).toEqual([
      { kind: 'concept', prefix: 'C', first: 3, last: 4, count: 2 },
    ]);
  });
});
