// Time windows over the `_created_at` / `_updated_at` stamps (ISO 8601, so
// they compare in order as text), for the graph's legend and the Primer:
// the fields, the "what changed since…" spans, how a stamp is shown, the
// graph's window over the shown elements' own stamps, and the Primer's
// queries. The Primer asks the engine to count each key type's concepts
// stamped in a window, the same COUNT a console query returns: one execute
// carries one command per type and answers with a list.
import { formatTime } from './time';
import type { Element, Json } from './kip';

export type TimeField = '_updated_at' | '_created_at';

/** The "what changed since…" spans, in minutes (SinceSelect.svelte offers them). */
export const SINCE_MINUTES: Record<string, number> = { '10m': 10, '1h': 60, '1d': 1440, '7d': 10080 };

/** The moment a "what changed since…" choice names: one of the spans back from `now`, else the value read as a date. */
export function sinceMoment(choice: string, now = Date.now()): Date {
  return SINCE_MINUTES[choice] ? new Date(now - SINCE_MINUTES[choice] * 60_000) : new Date(choice);
}

/** A moment as an ISO 8601 stamp to the second (as the engine writes them). */
export function isoSeconds(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** A stamp as shown beside the sliders; a dash for none. */
/** A stamp as every view shows time (`lib/time.ts`). */
export const shortTime = (iso: string | undefined) => formatTime(iso);

// ------------------------------------------------------------------ graph

/** The distinct stamps of `field` among elements, sorted (ISO 8601 sorts as text). */
export function stamps(metadata: Iterable<Record<string, unknown>>, field: string): string[] {
  const set = new Set<string>();
  for (const m of metadata) {
    const v = m[field];
    if (typeof v === 'string') set.add(v);
  }
  return [...set].sort();
}

/**
 * The graph's window: the sliders `from` and `to` index `list` (the shown
 * elements' distinct stamps, sorted); null when they span it all.
 */
export function stampWindow(list: string[], from: number, to: number, field: TimeField): { field: TimeField; from: string; to: string } | null {
  const last = list.length - 1;
  const first = Math.min(from, Math.max(0, last));
  const end = Math.min(to, last);
  if (last < 1 || (first <= 0 && end >= last)) return null;
  return { field, from: list[first], to: list[Math.max(first, end)] };
}

/** The ids of `elements` stamped at or after `since` on `field`, of those `shown` holds. */
export function changedIds(elements: Iterable<Element>, field: TimeField, since: string, shown: (id: string) => boolean): string[] {
  const ids: string[] = [];
  for (const e of elements) {
    const at = e.metadata[field];
    if (typeof at === 'string' && at >= since && shown(e.id)) ids.push(e.id);
  }
  return ids;
}

// ----------------------------------------------------------------- Primer

const lit = (s: string) => JSON.stringify(s);

/** One `FIND(MIN, MAX)` per type: the oldest and newest stamp of its concepts. */
export function boundsQuery(types: string[], field: TimeField): string {
  return types.map((t) => `FIND(MIN(?x.metadata.${field}), MAX(?x.metadata.${field})) WHERE { ?x {type: ${lit(t)}} }`).join('\n');
}

/** One `FIND(COUNT)` per type: its concepts stamped in `[from, to]` (`to` omitted: since `from`). */
export function countQuery(types: string[], field: TimeField, from: string, to?: string): string {
  const cond = to === undefined ? `?x.metadata.${field} >= ${lit(from)}` : `?x.metadata.${field} >= ${lit(from)} && ?x.metadata.${field} <= ${lit(to)}`;
  return types.map((t) => `FIND(COUNT(?x)) WHERE { ?x {type: ${lit(t)}} FILTER(${cond}) }`).join('\n');
}

/** The per-command results of a batch (a single command answers unwrapped). */
export function batchResults(result: Json, n: number): Json[] {
  if (n === 1) return [result];
  return Array.isArray(result) ? result.map((r) => (r && typeof r === 'object' && !Array.isArray(r) ? ((r as { result?: Json }).result ?? null) : r)) : [];
}

/** The earliest and latest stamp over every type's `[min, max]`; null when no concept has one. */
export function overallBounds(pairs: Json[]): { min: string; max: string } | null {
  let min: string | null = null;
  let max: string | null = null;
  for (const p of pairs) {
    if (!Array.isArray(p)) continue;
    const [a, b] = p;
    if (typeof a === 'string' && (min === null || a < min)) min = a;
    if (typeof b === 'string' && (max === null || b > max)) max = b;
  }
  return min !== null && max !== null ? { min, max } : null;
}

/** The stamp at slider position `pos` of `steps` between `min` and `max` (the ends exact). */
export function stampAt(min: string, max: string, pos: number, steps: number): string {
  if (pos <= 0) return min;
  if (pos >= steps) return max;
  const a = Date.parse(min);
  const b = Date.parse(max);
  return isoSeconds(new Date(a + ((b - a) * pos) / steps));
}
