// Logic properties in the app (BRIEF §8, seed 004): reading a concept
// type's `logic_properties` declaration, the input form each property's
// parameters call for, turning that form into `dynamic_params`, reading a
// `MISSING_INPUT_PARAMS` answer, and the shapes of answers (a number, a
// series, an operator's object). Pure functions (tested by Vitest); the
// resolver itself runs on the server — this module never computes a
// property.
import type { Table } from './kip';
import type { ResolveRequest } from '../transport';
import { isConcept, isObject, type Json, type JsonObject } from './kip';

/** One declared parameter of a logic property. */
export interface LogicParam {
  name: string;
  /** `STRING`, `INTEGER`, `NUMBER`, `BOOLEAN`, `OBJECT`, `ARRAY`. */
  type: string;
  /** `input` (asked of the user), `property` (an attribute), `const`. */
  valueFrom: string;
  required: boolean;
  description?: string;
}

/** One logic property of a type: a metric or an operator. */
export interface LogicProperty {
  name: string;
  kind: 'metric' | 'operator';
  description?: string;
  params: LogicParam[];
}

/** The steps a series may take (the resolver accepts exactly these). */
export const STEPS = ['day', 'week', 'month', 'quarter', 'year'] as const;

/** A metric's system parameters: the form shows them as a window. */
const SYSTEM = new Set(['instant', 'start', 'end', 'step']);

/** The logic properties a type definition's attributes declare, in declaration order. */
export function logicProperties(attributes: JsonObject | undefined): LogicProperty[] {
  const decl = attributes?.logic_properties;
  if (!isObject(decl)) return [];
  const out: LogicProperty[] = [];
  for (const [name, raw] of Object.entries(decl)) {
    if (!isObject(raw)) continue;
    const kind = raw.type === 'operator' ? 'operator' : raw.type === 'metric' ? 'metric' : null;
    if (!kind) continue;
    const params: LogicParam[] = [];
    for (const p of Array.isArray(raw.parameters) ? raw.parameters : []) {
      if (!isObject(p) || typeof p.name !== 'string') continue;
      params.push({
        name: p.name,
        type: typeof p.type === 'string' ? p.type.toUpperCase() : 'STRING',
        valueFrom: typeof p.value_from === 'string' ? p.value_from : 'input',
        required: p.required !== false,
        description: typeof p.description === 'string' ? p.description : undefined,
      });
    }
    out.push({ name, kind, description: typeof raw.description === 'string' ? raw.description : undefined, params });
  }
  return out;
}

/** The parameters the user supplies: `value_from: input`, the metric window shown apart. */
export function inputParams(prop: LogicProperty): LogicParam[] {
  return prop.params.filter((p) => p.valueFrom === 'input' && !(prop.kind === 'metric' && SYSTEM.has(p.name)));
}

/** What a property's form holds: the metric window, and every other input as typed text or a flag. */
export interface LogicForm {
  instant: boolean;
  /** `YYYY-MM-DD`, UTC. */
  start: string;
  /** `YYYY-MM-DD`, UTC, inclusive. */
  end: string;
  step: string;
  values: Record<string, string | boolean>;
}

const DAY_MS = 86_400_000;

/** `YYYY-MM-DD` of a time in ms (UTC). */
export function isoDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The ms of a `YYYY-MM-DD` day's start (UTC), or `null` for a blank or bad date. */
export function dayStart(day: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day.trim());
  if (!m) return null;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  // Date.UTC rolls 2024-13-45 over into 2025; a real day prints back as itself.
  return Number.isNaN(ms) || isoDay(ms) !== m[0] ? null : ms;
}

/**
 * A fresh form: the last twelve whole months and today (one count, or a
 * monthly series of twelve buckets when switched to a series); other
 * inputs blank, flags off.
 */
export function defaultForm(prop: LogicProperty, now: number = Date.now()): LogicForm {
  const today = new Date(now);
  const start = Date.UTC(today.getUTCFullYear() - 1, today.getUTCMonth() + 1, 1);
  const values: Record<string, string | boolean> = {};
  for (const p of inputParams(prop)) values[p.name] = p.type === 'BOOLEAN' ? false : '';
  return { instant: true, start: isoDay(start), end: isoDay(now), step: 'month', values };
}

/** Why a form cannot be sent as it is, by parameter name (checked before the server is asked). */
export type FormProblems = Record<string, string>;

/**
 * A form as the resolver's `dynamic_params` for one property. Blank inputs
 * are left out, so the resolver (or its LLM) decides and names what is
 * missing; text that cannot be the declared type is a problem here.
 */
export function toParams(prop: LogicProperty, form: LogicForm): { params: JsonObject; problems: FormProblems } {
  const params: JsonObject = {};
  const problems: FormProblems = {};
  const declared = new Set(prop.params.filter((p) => p.valueFrom === 'input').map((p) => p.name));
  if (prop.kind === 'metric') {
    if (declared.has('instant')) params.instant = form.instant;
    const start = dayStart(form.start);
    const end = dayStart(form.end);
    if (declared.has('start') && form.start.trim()) {
      if (start === null) problems.start = 'not a date';
      else params.start = start;
    }
    if (declared.has('end') && form.end.trim()) {
      // The end day is included: the window ends at its last millisecond.
      if (end === null) problems.end = 'not a date';
      else params.end = end + DAY_MS - 1;
    }
    if (start !== null && end !== null && start > end) problems.end = 'before the start';
    if (declared.has('step') && !form.instant) params.step = form.step;
  }
  for (const p of inputParams(prop)) {
    const raw = form.values[p.name];
    if (raw === undefined) continue;
    if (p.type === 'BOOLEAN') {
      params[p.name] = raw === true;
      continue;
    }
    const text = String(raw).trim();
    if (!text) continue;
    const value = typed(p.type, text);
    if (value === undefined) problems[p.name] = `not ${article(p.type)}`;
    else params[p.name] = value;
  }
  return { params, problems };
}

function article(type: string): string {
  const t = type.toLowerCase();
  return /^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`;
}

function typed(type: string, text: string): Json | undefined {
  switch (type) {
    case 'INTEGER': {
      const n = Number(text);
      return Number.isInteger(n) ? n : undefined;
    }
    case 'NUMBER': {
      const n = Number(text);
      return Number.isFinite(n) ? n : undefined;
    }
    case 'OBJECT':
    case 'ARRAY':
      try {
        const v = JSON.parse(text) as Json;
        return type === 'ARRAY' ? (Array.isArray(v) ? v : undefined) : isObject(v) ? v : undefined;
      } catch {
        return undefined;
      }
    default:
      return text;
  }
}

/** The form field a parameter is shown in (`window` for a metric's system parameters). */
export function fieldOf(prop: LogicProperty, param: string): string {
  return prop.kind === 'metric' && SYSTEM.has(param) ? 'window' : param;
}

/**
 * A `MISSING_INPUT_PARAMS` answer's `data.missing` as property → the
 * parameters to ask for, with the resolver's reason. Anything else: `{}`.
 */
export function missingInputs(error: { code?: string; data?: unknown } | null | undefined): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  if (!error || error.code !== 'MISSING_INPUT_PARAMS' || !isObject(error.data as Json)) return out;
  const list = (error.data as JsonObject).missing;
  if (!Array.isArray(list)) return out;
  for (const m of list) {
    if (!isObject(m) || typeof m.property !== 'string' || !Array.isArray(m.params)) continue;
    const params = (out[m.property] ??= {});
    for (const p of m.params) {
      if (isObject(p) && typeof p.name === 'string') params[p.name] = typeof p.hint === 'string' ? p.hint : typeof p.reason === 'string' ? p.reason : 'missing';
      else if (typeof p === 'string') params[p] = 'missing';
    }
  }
  return out;
}

/** One point of a series: the bucket's start (ms) and its value. */
export interface Point {
  t: number;
  value: number | null;
}

/** A series answer (`[{t, value}, …]`), or `null` when the value is not one. */
export function asSeries(v: Json | undefined): Point[] | null {
  if (!Array.isArray(v)) return null;
  const out: Point[] = [];
  for (const p of v) {
    if (!isObject(p) || typeof p.t !== 'number') return null;
    out.push({ t: p.t, value: typeof p.value === 'number' ? p.value : null });
  }
  return out;
}

/** A value as one short line: a number, a series' size and total, an object as JSON. */
export function showValue(v: Json | undefined): string {
  if (v === undefined || v === null) return '—';
  if (typeof v === 'number') return Number.isInteger(v) ? v.toLocaleString('en-US') : v.toLocaleString('en-US', { maximumFractionDigits: 4 });
  const s = asSeries(v);
  if (s) {
    const total = s.reduce((a, p) => a + (p.value ?? 0), 0);
    return `${s.length} ${s.length === 1 ? 'bucket' : 'buckets'}, total ${total.toLocaleString('en-US')}`;
  }
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** Concept columns of a result table: for each, its index, header and the one type of its concepts. */
export function conceptColumns(table: Table): { index: number; header: string; type: string; count: number }[] {
  const out: { index: number; header: string; type: string; count: number }[] = [];
  table.columns.forEach((header, index) => {
    let type: string | null = null;
    let count = 0;
    for (const row of table.rows) {
      const cell = row[index];
      if (!isConcept(cell)) continue;
      if (type === null) type = cell.type;
      else if (type !== cell.type) return;
      count++;
    }
    if (type !== null) out.push({ index, header, type, count });
  });
  return out;
}

/** The distinct concept ids of a column, in first-seen order. */
export function columnIds(table: Table, index: number): string[] {
  const seen = new Set<string>();
  for (const row of table.rows) {
    const cell = row[index];
    if (isConcept(cell)) seen.add(cell.id);
  }
  return [...seen];
}

/** A resolve request for `properties` of `type` over concepts by id, with the forms' parameters. */
export function resolveRequest(type: string, ids: string[], params: Record<string, JsonObject>): ResolveRequest {
  return {
    kn_id: '',
    ot_id: type,
    query: '',
    unique_identities: ids.map((id) => ({ id })),
    properties: Object.keys(params),
    additional_context: '',
    dynamic_params: params,
    options: { return_debug: false, max_repair_rounds: 1 },
  };
}

/** The type definition query: read fresh, as the resolver reads it. */
export const TYPE_QUERY = 'FIND(?t) WHERE { ?t {type: "$ConceptType", name: :name} }';
