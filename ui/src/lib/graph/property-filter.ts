// Filtering the scene by a property's value (Bloom's "filter by
// property"): `confidence < 0.5`, `expired`, `memory_tier = short`. Pure:
// which elements pass, the keys the scene holds (offered as a list, not
// typed blind), and the condition in words. The view dims or hides what
// does not pass (GraphModel.filterOut, the renderers' `dimmed`).
import { isConcept, type Element, type Json } from '../kip';
import { isPast } from '../time';
import { property } from './styling';

export type FilterOp = '<' | '<=' | '>' | '>=' | '=' | '!=' | 'has' | 'expired';

export interface PropertyFilter {
  /** The key (an attribute, else a metadata key; `name`, `type` and `predicate` too); unused by `expired`. */
  key: string;
  op: FilterOp;
  value: string;
  /** What the filter looks at: concepts, links, or both. */
  scope: 'nodes' | 'links' | 'both';
  /** What becomes of what does not pass. */
  mode: 'dim' | 'hide';
}

export const FILTER_OPS: { op: FilterOp; label: string }[] = [
  { op: '<', label: '<' },
  { op: '<=', label: '≤' },
  { op: '>', label: '>' },
  { op: '>=', label: '≥' },
  { op: '=', label: '=' },
  { op: '!=', label: '≠' },
  { op: 'has', label: 'is set' },
  { op: 'expired', label: 'expired (expires_at passed)' },
];

const needsValue = (op: FilterOp) => op !== 'has' && op !== 'expired';

function asNumber(v: Json | undefined): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return null;
}

const asText = (v: Json | undefined) => (v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v));

/** Whether `e` passes the filter (an element outside its scope always passes). */
export function passes(f: PropertyFilter, e: Element, now = Date.now()): boolean {
  if ((f.scope === 'nodes' && !isConcept(e)) || (f.scope === 'links' && isConcept(e))) return true;
  if (f.op === 'expired') return isPast(e.metadata.expires_at, now);
  const v = property(e, f.key);
  if (f.op === 'has') return v !== undefined && v !== null;
  if (v === undefined) return false;
  if (f.op === '=') return asText(v) === f.value;
  if (f.op === '!=') return asText(v) !== f.value;
  const a = asNumber(v);
  const b = asNumber(f.value);
  // Numbers compare as numbers; times and other text in text order (ISO stamps sort as text).
  const cmp = a !== null && b !== null ? a - b : asText(v).localeCompare(f.value);
  switch (f.op) {
    case '<':
      return cmp < 0;
    case '<=':
      return cmp <= 0;
    case '>':
      return cmp > 0;
    case '>=':
      return cmp >= 0;
  }
}

/** Whether the filter is complete enough to apply. */
export function ready(f: PropertyFilter | null): f is PropertyFilter {
  return !!f && (f.op === 'expired' || (!!f.key && (!needsValue(f.op) || f.value.trim() !== '')));
}

/** The condition in words: "confidence < 0.5", "expired", "memory_tier = short". */
export function describeFilter(f: PropertyFilter): string {
  if (f.op === 'expired') return 'expired';
  const op = FILTER_OPS.find((o) => o.op === f.op)?.label ?? f.op;
  return needsValue(f.op) ? `${f.key} ${op} ${f.value}` : `${f.key} ${op}`;
}

/**
 * The property keys the elements hold, most common first: attributes and
 * metadata (the engine's own `_`-stamps last), plus `name`/`type` for
 * concepts and `predicate` for links.
 */
export function sceneKeys(elements: Iterable<Element>, only?: 'nodes' | 'links'): string[] {
  const counts = new Map<string, number>();
  const count = (k: string) => counts.set(k, (counts.get(k) ?? 0) + 1);
  for (const e of elements) {
    const concept = isConcept(e);
    if ((only === 'nodes' && !concept) || (only === 'links' && concept)) continue;
    for (const k of Object.keys(e.attributes)) count(k);
    for (const k of Object.keys(e.metadata)) count(k);
    if (concept) {
      count('name');
      count('type');
    } else count('predicate');
  }
  return [...counts].sort((a, b) => Number(a[0].startsWith('_')) - Number(b[0].startsWith('_')) || b[1] - a[1] || a[0].localeCompare(b[0])).map(([k]) => k);
}

/** A filter read back from storage, or null when it is not one. */
export function readFilter(v: unknown): PropertyFilter | null {
  if (!v || typeof v !== 'object') return null;
  const o = v as Record<string, unknown>;
  if (typeof o.key !== 'string' || typeof o.value !== 'string' || !FILTER_OPS.some((x) => x.op === o.op)) return null;
  return {
    key: o.key,
    op: o.op as FilterOp,
    value: o.value,
    scope: o.scope === 'links' || o.scope === 'both' ? o.scope : 'nodes',
    mode: o.mode === 'hide' ? 'hide' : 'dim',
  };
}
