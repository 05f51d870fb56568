// The Trace view's helpers: sessions by originator and inactivity, JSON Lines.
import { describe, expect, it } from 'vitest';
import { groupSessions, toJsonl, SESSION_GAP_MS } from '../../src/lib/trace';
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
