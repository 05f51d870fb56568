// The Trace view's pure helpers: sessions and JSON Lines.
import type { TraceEntry } from '../transport/generated/kip-api';

/** A gap of inactivity longer than this starts a new session. */
export const SESSION_GAP_MS = 10 * 60 * 1000;

export interface TraceGroup {
  key: string;
  originator: string;
  /** Newest first, like the timeline. */
  entries: TraceEntry[];
  first: string;
  last: string;
}

/**
 * Entries (newest first) grouped by originator and session: an originator's
 * consecutive entries less than `gapMs` apart are one session. Groups come
 * newest first (by their newest entry).
 */
export function groupSessions(entries: TraceEntry[], gapMs = SESSION_GAP_MS): TraceGroup[] {
  const open = new Map<string, TraceGroup>();
  const groups: TraceGroup[] = [];
  for (const e of entries) {
    const current = open.get(e.originator);
    const t = Date.parse(e.at);
    if (current && Date.parse(current.first) - t <= gapMs) {
      current.entries.push(e);
      current.first = e.at;
      continue;
    }
    const g: TraceGroup = { key: `${e.originator}@${e.id}`, originator: e.originator, entries: [e], first: e.at, last: e.at };
    open.set(e.originator, g);
    groups.push(g);
  }
  return groups;
}

/** Entries as JSON Lines with the seed's field names (one entry per line). */
export function toJsonl(entries: TraceEntry[]): string {
  return entries.map((e) => JSON.stringify(e)).join('\n') + (entries.length ? '\n' : '');
}
