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

/**
 * One range of ids a bulk write created (`data.created`: the engine keeps a
 * write that creates more than 1,000 elements as `[first, last]` id ranges
 * instead of listing each element in `changes` / `elements`).
 */
export interface CreatedRange {
  kind: 'concept' | 'proposition';
  /** The id prefix, `C` or `P`. */
  prefix: string;
  first: number;
  last: number;
  count: number;
}

const ID = /^([CP]):(\d+)$/;

/** An entry's created ranges, in the engine's order; malformed pairs are skipped. */
export function createdRanges(entry: TraceEntry): CreatedRange[] {
  const list = (entry.data as { created?: unknown } | null | undefined)?.created;
  if (!Array.isArray(list)) return [];
  const out: CreatedRange[] = [];
  for (const pair of list) {
    if (!Array.isArray(pair) || pair.length !== 2) continue;
    const a = ID.exec(String(pair[0]));
    const b = ID.exec(String(pair[1]));
    if (!a || !b || a[1] !== b[1]) continue;
    const first = Number(a[2]);
    const last = Number(b[2]);
    if (!(last >= first)) continue;
    out.push({ kind: a[1] === 'C' ? 'concept' : 'proposition', prefix: a[1], first, last, count: last - first + 1 });
  }
  return out;
}

/** Whether `id` lies in one of `ranges`. */
export function inRanges(ranges: CreatedRange[], id: string): CreatedRange | undefined {
  const m = ID.exec(id);
  if (!m) return undefined;
  const n = Number(m[2]);
  return ranges.find((r) => r.prefix === m[1] && n >= r.first && n <= r.last);
}

/** The first `n` ids of a range, in order. */
export function rangeIds(range: CreatedRange, n: number): string[] {
  const count = Math.max(0, Math.min(n, range.count));
  return Array.from({ length: count }, (_, i) => `${range.prefix}:${range.first + i}`);
}

const count = (n: number, one: string, many: string) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

/** `C:5 … C:2004` (a single id alone). */
export function rangeLabel(r: CreatedRange): string {
  return r.first === r.last ? `${r.prefix}:${r.first}` : `${r.prefix}:${r.first} … ${r.prefix}:${r.last}`;
}

/**
 * "created 2,000 concepts (C:5 … C:2004) and 1,999 links (P:1 … P:1999)";
 * empty when the entry has no ranges.
 */
export function summariseCreated(ranges: CreatedRange[]): string {
  if (!ranges.length) return '';
  const parts = ranges.map((r) => `${count(r.count, r.kind === 'concept' ? 'concept' : 'link', r.kind === 'concept' ? 'concepts' : 'links')} (${rangeLabel(r)})`);
  const list = parts.length === 1 ? parts[0] : `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`;
  return `created ${list}`;
}

const dataOf = (e: TraceEntry) => (e.data ?? {}) as Record<string, unknown>;

/**
 * Whether an entry is a folded read (the engine folds identical read-only
 * queries into one entry per minute, `data.read_only`): the app's own
 * graph and Primer refreshes are these, and the Trace hides them unless
 * asked (issue 33 §2).
 */
export const isRead = (e: TraceEntry) => dataOf(e).read_only === true;

/** The entry that reverted this one (`data.reverted_by`), if any. */
export function revertedBy(e: TraceEntry): string | undefined {
  const by = dataOf(e).reverted_by;
  return typeof by === 'string' ? by : undefined;
}

/** A `datetime-local` value `minutes` before `now`, in local time, to the second. */
export function localMinutesAgo(minutes: number, now: Date = new Date()): string {
  const d = new Date(now.getTime() - minutes * 60_000);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

const OUTCOME_WORDS: [string, string, string][] = [
  ['concepts_created', 'concept', 'created'],
  ['concepts_updated', 'concept', 'updated'],
  ['concepts_deleted', 'concept', 'deleted'],
  ['propositions_created', 'link', 'created'],
  ['propositions_updated', 'link', 'updated'],
  ['propositions_deleted', 'link', 'deleted'],
];

/**
 * An entry's `data.outcome` in words (issue 33 §11): "2 concepts created,
 * 1 link updated", "failed with KIP_2001", "nothing changed"; other
 * outcomes as `key: value` pairs.
 */
export function describeOutcome(outcome: unknown): string {
  if (!outcome || typeof outcome !== 'object' || Array.isArray(outcome)) return outcome === undefined ? '' : String(outcome);
  const o = outcome as Record<string, unknown>;
  if (typeof o.error === 'string') return `failed with ${o.error}`;
  const parts: string[] = [];
  const known = new Set<string>();
  for (const [key, noun, verb] of OUTCOME_WORDS) {
    known.add(key);
    const n = o[key];
    if (typeof n === 'number' && n > 0) parts.push(`${count(n, noun, `${noun}s`)} ${verb}`);
  }
  for (const [k, v] of Object.entries(o)) if (!known.has(k)) parts.push(`${k.replace(/_/g, ' ')}: ${typeof v === 'string' ? v : JSON.stringify(v)}`);
  return parts.length ? parts.join(', ') : 'nothing changed';
}
