// The Primer's time window: the engine counts each key type's concepts whose
// `_created_at` / `_updated_at` stamp lies in a window (ISO 8601 stamps
// compare in order as text), the same COUNT a console query returns. One
// execute carries one command per type and answers with a list.
import type { Json } from './kip';

export type TimeField = '_updated_at' | '_created_at';

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
  return new Date(a + ((b - a) * pos) / steps).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
