// The inspector's edit form, its pure parts: each attribute edited with an
// input that fits its value (a long text in a text area, a number as a
// number, a list as a list of items), the lifecycle metadata of the RC11
// memory profile with typed inputs, and the curator's provenance — an edit
// by a person is recorded as the curator's, not as the agent's it replaces
// (issue 33 §4). What changed becomes an `Edit` for `editToKml`.
import type { Json, JsonObject } from './kip';
import type { Edit } from './kml';
import { parseField, showField } from './kml';
import { fromLocalInput, toLocalInput } from './time';

/** How an attribute's value is edited. */
export type FieldKind = 'text' | 'long' | 'number' | 'bool' | 'list' | 'json';

export interface AttrDraft {
  key: string;
  kind: FieldKind;
  /** The text of a text, long, number or JSON field. */
  text: string;
  /** The items of a list, as text. */
  items: string[];
  /** A boolean's value. */
  flag: boolean;
  /** The stored value; undefined for an attribute the form adds. */
  original?: Json;
  removed: boolean;
}

/** A string longer than this (or with a line break) is edited in a text area. */
export const LONG_TEXT = 60;

const plain = (v: Json) => v === null || typeof v !== 'object';

export function kindOf(v: Json | undefined): FieldKind {
  if (v === undefined) return 'text';
  if (typeof v === 'string') return v.length > LONG_TEXT || v.includes('\n') ? 'long' : 'text';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'boolean') return 'bool';
  if (Array.isArray(v) && v.every(plain)) return 'list';
  return 'json';
}

export function attrDraft(key: string, original?: Json): AttrDraft {
  const kind = kindOf(original);
  const items = kind === 'list' ? (original as Json[]).map((x) => (typeof x === 'string' ? x : JSON.stringify(x))) : [];
  const text = original === undefined ? '' : kind === 'json' ? JSON.stringify(original, null, 2) : showField(original);
  return { key, kind, text, items, flag: original === true, original, removed: false };
}

/** The value a draft stands for now. */
export function draftValue(d: AttrDraft): Json {
  switch (d.kind) {
    case 'text':
    case 'long':
      // A field that held a string stays a string; a new one is read as JSON when it is JSON.
      return typeof d.original === 'string' ? d.text : parseField(d.text);
    case 'number': {
      const t = d.text.trim();
      return t === '' ? null : Number(t);
    }
    case 'bool':
      return d.flag;
    case 'list': {
      const strings = Array.isArray(d.original) && d.original.every((x) => typeof x === 'string');
      return d.items.filter((x) => x.trim() !== '').map((x) => (strings ? x : parseField(x)));
    }
    case 'json':
      return parseField(d.text);
  }
}

export const MEMORY_TIERS = ['short-term', 'long-term'] as const;

/** The metadata the form edits, as form values. */
export interface MetaForm {
  source: string;
  author: string;
  /** 0–1, '' for none. */
  confidence: string;
  /** 0–1, '' for none. */
  memory_strength: string;
  /** '', `short-term` or `long-term`. */
  memory_tier: string;
  /** A `datetime-local` value, '' for none. */
  expires_at: string;
  superseded: boolean;
}

/** Who made an edit in the app: the curator's source and name (the trace's originator). */
export interface Stamp {
  source: string;
  author: string;
}

export const CURATOR_SOURCE = 'curator';

const num = (v: Json | undefined) => (typeof v === 'number' ? String(v) : '');

/** The form for `meta`, its provenance already the curator's (`stamp`). */
export function metaForm(meta: JsonObject, stamp: Stamp): MetaForm {
  return {
    source: stamp.source,
    author: stamp.author,
    confidence: num(meta.confidence),
    memory_strength: num(meta.memory_strength),
    memory_tier: typeof meta.memory_tier === 'string' ? meta.memory_tier : '',
    expires_at: toLocalInput(meta.expires_at),
    superseded: meta.superseded === true,
  };
}

const sameJson = (a: Json | undefined, b: Json | undefined) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * What the form changes, as an `Edit`; `now` stamps `superseded_at`. The
 * curator's provenance is written along with any other change (never on
 * its own: opening the form and reviewing it changes nothing).
 */
export function formEdit(attributes: JsonObject, meta: JsonObject, drafts: AttrDraft[], form: MetaForm, stamp: Stamp, now: string): Edit {
  const set: JsonObject = {};
  const remove: string[] = [];
  for (const d of drafts) {
    const key = d.key.trim();
    if (!key) continue;
    if (d.removed) {
      if (d.original !== undefined) remove.push(key);
      continue;
    }
    const value = draftValue(d);
    if (d.original === undefined || !sameJson(value, attributes[key])) set[key] = value;
  }
  const metadata: JsonObject = {};
  const numOrNull = (t: string) => (t.trim() === '' ? null : Number(t));
  if (form.confidence !== num(meta.confidence)) metadata.confidence = numOrNull(form.confidence);
  if (form.memory_strength !== num(meta.memory_strength)) metadata.memory_strength = numOrNull(form.memory_strength);
  if (form.memory_tier !== (typeof meta.memory_tier === 'string' ? meta.memory_tier : '')) metadata.memory_tier = form.memory_tier || null;
  const expires = fromLocalInput(form.expires_at);
  if (form.expires_at !== toLocalInput(meta.expires_at)) metadata.expires_at = expires || null;
  if (form.superseded !== (meta.superseded === true)) {
    metadata.superseded = form.superseded;
    if (form.superseded) metadata.superseded_at = now;
  }
  const provenanceEdited = form.source !== stamp.source || form.author !== stamp.author;
  const changed = Object.keys(set).length > 0 || remove.length > 0 || Object.keys(metadata).length > 0;
  if (changed || provenanceEdited) {
    if (form.source !== showField(meta.source ?? '')) metadata.source = form.source;
    if (form.author !== showField(meta.author ?? '')) metadata.author = form.author;
  }
  return { set, remove, metadata };
}

/** The name this UI's writes are traced under (BRIEF §7): `curator`, unless the settings chose another. */
export function curatorName(): string {
  try {
    return globalThis.localStorage?.getItem('kip.originator')?.trim() || 'curator';
  } catch {
    return 'curator';
  }
}
