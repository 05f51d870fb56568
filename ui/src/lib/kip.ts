// KIP values as the engine returns them (BRIEF §3), and the few pieces of
// KIP text the UI writes itself (literals and element references). The UI
// never parses KIP: the engine validates, formats and executes.
import type { JsonValue } from '../transport';

export type Json = JsonValue;
export type JsonObject = { [key: string]: JsonValue | undefined };

export type ConceptNode = {
  _type: 'ConceptNode';
  id: string;
  type: string;
  name: string;
  attributes: JsonObject;
  metadata: JsonObject;
};

export type PropositionLink = {
  _type: 'PropositionLink';
  id: string;
  subject: string;
  predicate: string;
  object: string;
  attributes: JsonObject;
  metadata: JsonObject;
};

export type Element = ConceptNode | PropositionLink;

export function isObject(v: unknown): v is JsonObject {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}
export function isConcept(v: unknown): v is ConceptNode {
  return isObject(v) && v._type === 'ConceptNode' && typeof v.id === 'string';
}
export function isProposition(v: unknown): v is PropositionLink {
  return isObject(v) && v._type === 'PropositionLink' && typeof v.id === 'string';
}
export function isElement(v: unknown): v is Element {
  return isConcept(v) || isProposition(v);
}

/** A KIP string literal (KIP strings are JSON strings). */
export function lit(value: Json | undefined): string {
  return JSON.stringify(value ?? null);
}

/** `{type: "Drug", name: "Aspirin"}` — how KML names a concept. */
export function conceptRef(c: Pick<ConceptNode, 'type' | 'name'>): string {
  return `{type: ${lit(c.type)}, name: ${lit(c.name)}}`;
}

/** An object literal with identifier keys where KIP allows them. */
export function objectLiteral(obj: JsonObject, indent = '  '): string {
  const keys = Object.keys(obj);
  if (!keys.length) return '{}';
  const lines = keys.map((k) => `${indent}  ${/^[A-Za-z_][A-Za-z0-9_]*$/.test(k) ? k : lit(k)}: ${lit(obj[k])}`);
  return `{\n${lines.join(',\n')}\n${indent}}`;
}

/** Every concept and proposition object anywhere in a result, once each. */
export function collectElements(value: Json | undefined, out = new Map<string, Element>()): Map<string, Element> {
  if (Array.isArray(value)) {
    for (const v of value) collectElements(v, out);
  } else if (isElement(value)) {
    if (!out.has(value.id)) out.set(value.id, value);
  } else if (isObject(value)) {
    for (const v of Object.values(value)) collectElements(v, out);
  }
  return out;
}

export interface Table {
  columns: string[];
  rows: Json[][];
}

/**
 * A FIND result as rows. FIND is columnar (one column per expression,
 * unwrapped when there is one), so `expressions` — how many the query has,
 * when the caller knows — decides between "one column of arrays" and
 * "several columns".
 */
export function toTable(result: Json | undefined, headers: string[] = []): Table {
  const k = headers.length;
  const header = (i: number) => headers[i] ?? `column ${i + 1}`;
  if (!Array.isArray(result)) {
    return { columns: [header(0)], rows: [[result ?? null]] };
  }
  const looksColumnar =
    result.length > 1 &&
    result.every((c) => Array.isArray(c)) &&
    new Set(result.map((c) => (c as Json[]).length)).size === 1;
  if ((k > 1 && looksColumnar && result.length === k) || (k === 0 && looksColumnar && !result.some(isElement))) {
    const cols = result as Json[][];
    const n = cols[0].length;
    const rows: Json[][] = [];
    for (let i = 0; i < n; i++) rows.push(cols.map((c) => c[i]));
    return { columns: cols.map((_, i) => header(i)), rows };
  }
  if (k > 1 && result.length === k && !result.some(Array.isArray)) {
    // Several aggregates: one scalar each.
    return { columns: headers, rows: [result] };
  }
  return { columns: [header(0)], rows: result.map((v) => [v]) };
}

/**
 * The expressions of a FIND clause, for table headers only: the text
 * between `FIND(` and its closing parenthesis, split on top-level commas.
 * Display sugar; the engine remains the only parser.
 */
export function findHeaders(text: string): string[] {
  const m = /\bFIND\s*\(/.exec(text);
  if (!m) return [];
  let depth = 1;
  let i = m.index + m[0].length;
  const start = i;
  let inString = false;
  for (; i < text.length && depth > 0; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === '(' || ch === '[' || ch === '{') depth++;
    else if (ch === ')' || ch === ']' || ch === '}') depth--;
  }
  const inner = text.slice(start, i - 1);
  const parts: string[] = [];
  let cur = '';
  depth = 0;
  inString = false;
  for (let j = 0; j < inner.length; j++) {
    const ch = inner[j];
    if (inString) {
      cur += ch;
      if (ch === '\\') cur += inner[++j] ?? '';
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    if (ch === '(' || ch === '[' || ch === '{') depth++;
    if (ch === ')' || ch === ']' || ch === '}') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  if (cur.trim()) parts.push(cur.trim());
  return parts;
}

/** A short, human label for any value in a table cell. */
export function preview(value: Json | undefined): string {
  if (value === null || value === undefined) return '∅';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (isConcept(value)) return `${value.type}: ${value.name}`;
  if (isProposition(value)) return `(${value.subject}) —${value.predicate}→ (${value.object})`;
  const s = JSON.stringify(value);
  return s.length > 80 ? `${s.slice(0, 77)}…` : s;
}

export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}
