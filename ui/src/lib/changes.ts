// A write's changes, element by element, as the engine describes them in a
// dry run's `changes` list (kip-nexus kml/changes.rs): sentences for the
// summary and before → after rows for the diff. Nothing here guesses what a
// write does: it only reads what the engine reported.
import type { ElementChange, ChangeState } from '../transport/generated/kip-api';
import type { Json } from './kip';

/** Every `changes` list in a KML result: one command's object, or a text's list of responses. */
export function changesOf(result: Json | undefined): ElementChange[] {
  const one = (r: unknown): ElementChange[] => {
    const list = r && typeof r === 'object' && !Array.isArray(r) ? (r as { changes?: unknown }).changes : undefined;
    return Array.isArray(list) ? (list as ElementChange[]) : [];
  };
  if (Array.isArray(result)) return result.flatMap((item) => one((item as { result?: unknown })?.result ?? item));
  return one(result);
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** "creates 2 concepts and 2 links, changes 1 concept" — or "changes nothing". */
export function summariseChanges(changes: ElementChange[]): string {
  const count = (op: string, kind: string) => changes.filter((c) => c.op === op && c.kind === kind).length;
  const parts: string[] = [];
  for (const [op, verb] of [['created', 'creates'], ['updated', 'changes'], ['deleted', 'deletes']] as const) {
    const things = [
      count(op, 'concept') ? plural(count(op, 'concept'), 'concept', 'concepts') : '',
      count(op, 'proposition') ? plural(count(op, 'proposition'), 'link', 'links') : '',
    ].filter(Boolean);
    if (things.length) parts.push(`${verb} ${things.join(' and ')}`);
  }
  return parts.length ? parts.join(', ') : 'changes nothing';
}

/** How an element is named in the diff: `Drug "Aspirin"` or `Aspirin —treats→ Headache`. */
export function describeElement(c: ElementChange): string {
  if (c.kind === 'concept') return `${c.type ?? '?'} “${c.name ?? c.id}”`;
  const end = (e: ElementChange['subject']) => e?.name ?? e?.id ?? '?';
  return `${end(c.subject)} —${c.predicate ?? '?'}→ ${end(c.object)}`;
}

export interface DiffRow {
  section: 'attributes' | 'metadata';
  key: string;
  before?: unknown;
  after?: unknown;
  change: 'added' | 'removed' | 'changed';
}

/** The engine's own bookkeeping: shown only when nothing else changed. */
const TIMESTAMPS = new Set(['_created_at', '_updated_at']);

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The keys whose values differ between before and after (all keys of a creation or deletion). */
export function diffRows(before?: ChangeState, after?: ChangeState): DiffRow[] {
  const rows: DiffRow[] = [];
  for (const section of ['attributes', 'metadata'] as const) {
    const b = (before?.[section] ?? {}) as Record<string, unknown>;
    const a = (after?.[section] ?? {}) as Record<string, unknown>;
    for (const key of new Set([...Object.keys(b), ...Object.keys(a)])) {
      if (section === 'metadata' && TIMESTAMPS.has(key)) continue;
      const inB = key in b;
      const inA = key in a;
      if (inB && inA && same(b[key], a[key])) continue;
      rows.push({ section, key, before: b[key], after: a[key], change: inB && inA ? 'changed' : inA ? 'added' : 'removed' });
    }
  }
  return rows;
}

/** A value as the diff shows it: strings plain, lists comma-separated, the rest as JSON. */
export function showValue(v: unknown): string {
  if (v === undefined) return '—';
  if (typeof v === 'string') return v;
  if (Array.isArray(v) && v.every((x) => typeof x !== 'object' || x === null)) return v.map((x) => String(x)).join(', ');
  return JSON.stringify(v);
}

/**
 * One sentence for a KML result (or each result of a batch), for the
 * console's preview: from its changes when the engine listed them, else from
 * its counts.
 */
export function summariseResult(result: Json): string {
  const changes = changesOf(result);
  if (changes.length || Array.isArray((result as { changes?: unknown } | null)?.changes)) {
    const s = summariseChanges(changes);
    return s === 'changes nothing' ? 'This changes nothing.' : `This ${s}.`;
  }
  const one = (r: Json): string => {
    if (!r || typeof r !== 'object' || Array.isArray(r)) return '';
    const o = r as Record<string, Json>;
    const n = (k: string) => (typeof o[k] === 'number' ? (o[k] as number) : Array.isArray(o[k]) ? (o[k] as Json[]).length : 0);
    const parts: string[] = [];
    if (n('upsert_concept_nodes')) parts.push(`create or update ${n('upsert_concept_nodes')} concept(s)`);
    if (n('upsert_proposition_links')) parts.push(`create or update ${n('upsert_proposition_links')} link(s)`);
    if (n('updated_concepts')) parts.push(`change ${n('updated_concepts')} concept(s)`);
    if (n('updated_propositions')) parts.push(`change ${n('updated_propositions')} link(s)`);
    if (n('deleted_concepts')) parts.push(`delete ${n('deleted_concepts')} concept(s)`);
    if (n('deleted_propositions')) parts.push(`delete ${n('deleted_propositions')} link(s)`);
    return parts.join(', ');
  };
  const items = Array.isArray(result) ? result.map((r) => one((r as Record<string, Json>)?.result ?? r)) : [one(result)];
  const text = items.filter(Boolean).join('; ');
  return text ? `This will ${text}.` : 'This changes nothing.';
}
