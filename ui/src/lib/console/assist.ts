// Completion and live diagnostics for the console editor. Completion
// draws on the live schema (types, predicates, instance_schema keys) and on
// SEARCH for concept names; diagnostics come from the engine's validate
// operation at the exact ranges it reports, and so does what the console
// must know about each command (whether it writes, its placeholders): the
// console never tells these from the text itself.
import type { Completion, CompletionContext, CompletionResult } from '@codemirror/autocomplete';
import type { Diagnostic as CmDiagnostic } from '@codemirror/lint';
import type { EditorView } from '@codemirror/view';
import { ApiFailure, type CommandOutline, type Diagnostic, type Pattern, type Transport, type ValidateResponse } from '../../transport';
import { isConcept, type Json } from '../kip';
import type { PredicateDef, TypeDef } from '../state.svelte';
import { FUNCTIONS, KEYWORDS, SEARCH_MODES } from './kip-language';

export interface SchemaSource {
  types(): TypeDef[];
  predicates(): PredicateDef[];
  transport(): Transport;
}

const ELEMENT_FIELDS = ['id', 'type', 'name', 'attributes', 'metadata'];
const PROPOSITION_FIELDS = ['id', 'subject', 'predicate', 'object', 'attributes', 'metadata'];
const METADATA_KEYS = [
  'source', 'author', 'confidence', 'status', 'evidence', 'created_at', 'expires_at',
  // The engine's own keys: read them (e.g. `_version` for EXPECT VERSION), never write them.
  '_version', '_created_at', '_updated_at', '_merged_from', '_score',
];

/** The concept type a variable is declared with in the text (`?d {type: "Drug"}`), if any. */
export function declaredType(text: string, variable: string): string | null {
  const re = new RegExp(`\\?${variable}\\s*\\{[^{}]*?type\\s*:\\s*"([^"]+)"`);
  return re.exec(text)?.[1] ?? null;
}

function quoteAware(label: string, quoted: boolean, detail?: string, info?: string, type = 'type'): Completion {
  return { label, type, detail, info, apply: quoted ? label : JSON.stringify(label) };
}

export function kipCompletion(source: SchemaSource) {
  return async (ctx: CompletionContext): Promise<CompletionResult | null> => {
    const before = ctx.state.sliceDoc(Math.max(0, ctx.pos - 400), ctx.pos);
    const doc = ctx.state.doc.toString();

    // Inside a string after `type:` (or DESCRIBE CONCEPT TYPE): concept types.
    let m = /(?:\btype\s*:\s*|DESCRIBE\s+CONCEPT\s+TYPE\s+|WITH\s+TYPE\s+)"([^"]*)$/.exec(before);
    if (m) {
      return {
        from: ctx.pos - m[1].length,
        options: source.types().map((t) => quoteAware(t.name, true, t.displayHint, t.description)),
        validFor: /^[^"]*$/,
      };
    }
    // After `type:` without a quote yet.
    m = /\btype\s*:\s*([A-Za-z_$]*)$/.exec(before);
    if (m && ctx.explicit) {
      return {
        from: ctx.pos - m[1].length,
        options: source.types().map((t) => quoteAware(t.name, false, t.displayHint, t.description)),
      };
    }
    // Predicate position of a proposition pattern `(?s, "…` or DESCRIBE PROPOSITION TYPE.
    m = /(?:\(\s*[^,()"]+,\s*|\(\s*"|DESCRIBE\s+PROPOSITION\s+TYPE\s+|\|\s*)"?([A-Za-z0-9_]*)$/.exec(before);
    if (m && /"[A-Za-z0-9_]*$/.test(before)) {
      return {
        from: ctx.pos - m[1].length,
        options: source.predicates().map((p) =>
          quoteAware(p.name, true, `${p.subjectTypes.join('|') || '*'} → ${p.objectTypes.join('|') || '*'}`, p.description, 'function'),
        ),
        validFor: /^[A-Za-z0-9_]*$/,
      };
    }
    // SEARCH … MODE "…": the retrieval modes (only "keyword" runs here).
    m = /\bMODE\s+"([^"]*)$/.exec(before);
    if (m) {
      return {
        from: ctx.pos - m[1].length,
        options: SEARCH_MODES.map((mode) => ({
          label: mode,
          type: 'enum',
          apply: mode,
          detail: mode === 'keyword' ? 'lexical match' : 'not supported by this nexus',
          boost: mode === 'keyword' ? 1 : -1,
        })),
        validFor: /^[a-z]*$/,
      };
    }
    // Concept names: `name: "…` or SEARCH CONCEPT "…" — ask the engine.
    m = /(?:\bname\s*:\s*|SEARCH\s+(?:CONCEPT|PROPOSITION)\s+)"([^"]*)$/.exec(before);
    if (m) {
      const term = m[1];
      if (!term && !ctx.explicit) return null;
      const typeMatch = /type\s*:\s*"([^"]+)"[^{}]*$/.exec(before);
      const names = await searchNames(source.transport(), term, typeMatch?.[1]);
      if (ctx.aborted) return null;
      return {
        from: ctx.pos - term.length,
        options: names.map((n) => ({ label: n.name, detail: n.type, type: 'variable', apply: n.name })),
        filter: false,
      };
    }
    // Attribute keys: `?x.attributes.…`, `?x.metadata.…`, `?x.…`.
    m = /\?([A-Za-z_][A-Za-z0-9_]*)\.(attributes|metadata)\.([A-Za-z0-9_]*)$/.exec(before);
    if (m) {
      const [, variable, part, prefix] = m;
      const keys =
        part === 'metadata'
          ? METADATA_KEYS
          : attributeKeys(source.types(), declaredType(doc, variable));
      return {
        from: ctx.pos - prefix.length,
        options: keys.map((k) => ({ label: k, type: 'property' })),
        validFor: /^[A-Za-z0-9_]*$/,
      };
    }
    m = /\?([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z0-9_]*)$/.exec(before);
    if (m) {
      const fields = new Set([...ELEMENT_FIELDS, ...PROPOSITION_FIELDS]);
      return {
        from: ctx.pos - m[2].length,
        options: [...fields].map((k) => ({ label: k, type: 'property' })),
        validFor: /^[A-Za-z0-9_]*$/,
      };
    }
    // Variables already used in the text.
    m = /\?([A-Za-z0-9_]*)$/.exec(before);
    if (m) {
      const vars = new Set<string>();
      for (const v of doc.matchAll(/\?([A-Za-z_][A-Za-z0-9_]*)/g)) if (v[1] !== m[1]) vars.add(v[1]);
      return {
        from: ctx.pos - m[1].length,
        options: [...vars].map((v) => ({ label: v, type: 'variable', detail: 'variable' })),
        validFor: /^[A-Za-z0-9_]*$/,
      };
    }
    // Keywords and functions, in upper case as KIP writes them.
    const word = ctx.matchBefore(/[A-Za-z_]+/);
    if (!word || (word.from === word.to && !ctx.explicit)) return null;
    if (/"[^"]*$/.test(before.split('\n').pop() ?? '')) return null;
    return {
      from: word.from,
      options: [
        ...KEYWORDS.map((k) => ({ label: k, type: 'keyword', boost: 1 })),
        ...FUNCTIONS.map((f) => ({ label: f, type: 'function', apply: `${f}(` })),
        ...source.types().map((t) => ({ label: t.name, type: 'type', detail: 'concept type', apply: JSON.stringify(t.name), boost: -1 })),
      ],
      validFor: /^[A-Za-z_]*$/,
    };
  };
}

export function attributeKeys(types: TypeDef[], type: string | null): string[] {
  const keys = new Set<string>();
  for (const t of types) {
    if (type && t.name !== type) continue;
    for (const k of Object.keys(t.instanceSchema ?? {})) keys.add(k);
  }
  if (!keys.size && type) return attributeKeys(types, null);
  return [...keys].sort();
}

async function searchNames(transport: Transport, term: string, type?: string): Promise<{ name: string; type: string }[]> {
  try {
    const r = term
      ? await transport.execute({
          // Completion is by name: keyword mode, whatever the nexus's default.
          command: type
            ? 'SEARCH CONCEPT :term WITH TYPE :type MODE "keyword" LIMIT 20'
            : 'SEARCH CONCEPT :term MODE "keyword" LIMIT 20',
          parameters: type ? { term, type } : { term },
        })
      : await transport.execute({
          command: 'FIND(?x) WHERE { ?x {type: :type} } LIMIT 20',
          parameters: { type: type ?? 'Domain' },
        });
    const list = Array.isArray(r.result) ? (r.result as Json[]) : [];
    return list.filter(isConcept).map((c) => ({ name: c.name, type: c.type }));
  } catch {
    return [];
  }
}

/** How many UTF-8 bytes the code point `cp` takes. */
function utf8Length(cp: number): number {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

/** UTF-8 byte offset → UTF-16 index in `text`. */
export function byteToUtf16(text: string, byteOffset: number): number {
  let bytes = 0;
  let i = 0;
  while (i < text.length && bytes < byteOffset) {
    const cp = text.codePointAt(i) ?? 0;
    bytes += utf8Length(cp);
    i += cp >= 0x10000 ? 2 : 1;
  }
  return i;
}

/** UTF-16 index → UTF-8 byte offset in `text` (the inverse of `byteToUtf16`). */
export function utf16ToByte(text: string, index: number): number {
  let bytes = 0;
  let i = 0;
  while (i < text.length && i < index) {
    const cp = text.codePointAt(i) ?? 0;
    bytes += utf8Length(cp);
    i += cp >= 0x10000 ? 2 : 1;
  }
  return bytes;
}

export interface EditorProblem {
  from: number;
  to: number;
  line: number;
  column: number;
  code: string;
  message: string;
  hint: string;
  suggestions: string[];
}

/** What the editor learns from one check of its text. */
export interface Diagnosis {
  problems: EditorProblem[];
  /** The WHERE block as a diagram (a single FIND, DELETE, UPDATE, MERGE or EXPORT that parses). */
  pattern: Pattern | null;
  /** Each command of the text; null when the text does not parse or the host cannot say. */
  outline: CommandOutline[] | null;
}

/** Whether the engine parsed the text (a text that does not parse has no command). */
function parsed(r: ValidateResponse): boolean {
  return r.ok || r.commands > 0;
}

/**
 * The engine's outline of a text: each command's kind, whether it writes
 * and its placeholders; null when the text does not parse (the engine then
 * refuses to run it). Throws when the engine cannot be asked.
 */
export async function outlineOf(transport: Transport, text: string): Promise<CommandOutline[] | null> {
  if (!text.trim()) return [];
  const r = await transport.validate({ text });
  return parsed(r) ? r.outline : null;
}

/**
 * Whether running a text must show the engine's dry-run preview first.
 * `outline` is what {@link outlineOf} found: undefined when the engine could
 * not be asked (then the preview is the safe choice), null when the text
 * does not parse (the engine refuses it before anything runs).
 */
export function previewFirst(outline: CommandOutline[] | null | undefined): boolean {
  if (outline === undefined) return true;
  return outline?.some((c) => c.writes) ?? false;
}

/** The names of the placeholders of an outline, in order, each once. */
export function placeholderNames(outline: CommandOutline[]): string[] {
  return [...new Set(outline.flatMap((c) => c.placeholders.map((p) => p.name)))];
}

/**
 * Every problem of a text with its range in UTF-16 units, its pattern
 * diagram and its outline. Uses the engine's `validate`: first without
 * parameters, which yields the placeholders; when there are some and
 * `parameters` is given, again with `parameters(names)`, so they are bound
 * and the text is checked against the schema. A host without `validate` is
 * asked for a dry run, whose single error carries its byte offset and
 * length (and no diagram, outline or parameters).
 */
export async function diagnose(
  transport: Transport,
  text: string,
  parameters?: (names: string[]) => Record<string, Json>,
): Promise<Diagnosis> {
  if (!text.trim()) return { problems: [], pattern: null, outline: [] };
  try {
    let r = await transport.validate({ text });
    const outline = parsed(r) ? r.outline : null;
    const names = placeholderNames(outline ?? []);
    if (parameters && names.length) r = await transport.validate({ text, parameters: parameters(names) });
    const problems = r.diagnostics.map((d: Diagnostic) => ({
      from: d.from.utf16,
      to: Math.max(d.to.utf16, d.from.utf16),
      line: d.from.line,
      column: d.from.column,
      code: d.code,
      message: d.message,
      hint: d.hint,
      suggestions: d.suggestions,
    }));
    return { problems, pattern: r.pattern ?? null, outline };
  } catch (e) {
    if (!(e instanceof ApiFailure) || e.code !== 'API_UNKNOWN_OPERATION') throw e;
  }
  // Without validate nothing says which placeholders the text has, so none
  // are bound: a placeholder shows as a missing parameter.
  const r = await transport.execute({ command: text, dry_run: true });
  if (!r.error) return { problems: [], pattern: null, outline: null };
  const data = (r.error.data ?? {}) as Record<string, Json>;
  const offset = typeof data.offset === 'number' ? data.offset : 0;
  const length = typeof data.length === 'number' ? data.length : 0;
  const from = byteToUtf16(text, offset);
  const to = byteToUtf16(text, offset + length);
  const problem: EditorProblem = {
    from,
    to,
    line: typeof data.line === 'number' ? data.line : 1,
    column: typeof data.column === 'number' ? data.column : 1,
    code: r.error.code,
    message: r.error.message,
    hint: r.error.hint,
    suggestions: Array.isArray(data.suggestions) ? (data.suggestions as string[]) : [],
  };
  return { problems: [problem], pattern: null, outline: null };
}

/** Replaces `from..to` by a suggested name, quoted when the old text was a string. */
export function insertSuggestion(view: EditorView, from: number, to: number, suggestion: string): void {
  const old = view.state.sliceDoc(from, to);
  view.dispatch({ changes: { from, to, insert: old.startsWith('"') ? JSON.stringify(suggestion) : suggestion } });
}

export function toCmDiagnostics(view: EditorView, problems: EditorProblem[]): CmDiagnostic[] {
  const len = view.state.doc.length;
  return problems.map((p) => {
    const from = Math.min(p.from, len);
    let to = Math.min(p.to, len);
    if (to <= from) to = Math.min(from + 1, len);
    return {
      from,
      to,
      severity: 'error',
      source: p.code,
      message: `${p.message}${p.hint ? `\n${p.hint}` : ''}`,
      actions: p.suggestions.slice(0, 3).map((s) => ({
        name: `Use “${s}”`,
        apply(v: EditorView, f: number, t: number) {
          insertSuggestion(v, f, t, s);
        },
      })),
    };
  });
}
