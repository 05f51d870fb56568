// Saved queries: a console text with a name, a description and default
// values for its `:name` parameters, kept with the nexus (`ui.queries`) and
// exportable as one `.kip` file. Pure.
//
// The `.kip` file is valid KIP: each query is preceded by `//` comment lines
// that carry its name, description and parameter defaults, so the file runs
// as it is (with parameters) and reads back into the list.
import type { Json } from './kip';

export interface SavedQuery {
  name: string;
  description: string;
  text: string;
  /** Default values of the query's placeholders (JSON, or text as the console takes it). */
  parameters: Record<string, string>;
}

export function readQueries(value: Json | undefined): SavedQuery[] {
  if (!Array.isArray(value)) return [];
  const out: SavedQuery[] = [];
  for (const v of value) {
    if (!v || typeof v !== 'object' || Array.isArray(v)) continue;
    const o = v as Record<string, Json>;
    if (typeof o.name !== 'string' || typeof o.text !== 'string') continue;
    const params: Record<string, string> = {};
    if (o.parameters && typeof o.parameters === 'object' && !Array.isArray(o.parameters)) {
      for (const [k, p] of Object.entries(o.parameters)) if (typeof p === 'string') params[k] = p;
    }
    out.push({ name: o.name, description: typeof o.description === 'string' ? o.description : '', text: o.text, parameters: params });
  }
  return out;
}

export function queriesJson(queries: SavedQuery[]): Json {
  return queries.map((q) => ({ name: q.name, description: q.description, text: q.text, parameters: { ...q.parameters } }));
}

/** Adds `q`, replacing a saved query of the same name; sorted by name. */
export function upsertQuery(queries: SavedQuery[], q: SavedQuery): SavedQuery[] {
  return [...queries.filter((x) => x.name !== q.name), q].sort((a, b) => a.name.localeCompare(b.name));
}

/** Queries whose name, description or text contains every word of `filter`. */
export function searchQueries(queries: SavedQuery[], filter: string): SavedQuery[] {
  const words = filter.toLowerCase().split(/\s+/).filter(Boolean);
  return queries.filter((q) => {
    const hay = `${q.name}\n${q.description}\n${q.text}`.toLowerCase();
    return words.every((w) => hay.includes(w));
  });
}

const oneLine = (s: string) => s.replace(/[\r\n]+/g, ' ').trim();

/** Every query as one `.kip` file, each after its `// @query`, `// @description` and `// @param` lines. */
export function queriesToKip(queries: SavedQuery[]): string {
  const parts = ['// Saved queries exported from KIP Explorer.', '// Each query follows its @query line; @param lines give its parameters\' default values.', ''];
  for (const q of queries) {
    parts.push(`// @query ${oneLine(q.name)}`);
    if (q.description.trim()) parts.push(`// @description ${oneLine(q.description)}`);
    for (const [k, v] of Object.entries(q.parameters)) parts.push(`// @param :${k} = ${oneLine(v)}`);
    parts.push(q.text.trim(), '');
  }
  return parts.join('\n');
}

/** Reads a file written by `queriesToKip` back into queries (text outside `@query` sections is ignored). */
export function queriesFromKip(file: string): SavedQuery[] {
  const out: SavedQuery[] = [];
  let current: SavedQuery | null = null;
  let body: string[] = [];
  const flush = () => {
    if (current) out.push({ ...current, text: body.join('\n').trim() });
    current = null;
    body = [];
  };
  for (const line of file.split(/\r?\n/)) {
    const tag = /^\/\/ @(query|description|param)\s+(.*)$/.exec(line);
    if (tag?.[1] === 'query') {
      flush();
      current = { name: tag[2].trim(), description: '', text: '', parameters: {} };
    } else if (tag && current && body.length === 0) {
      if (tag[1] === 'description') current.description = tag[2].trim();
      else {
        const p = /^:([A-Za-z_][A-Za-z0-9_]*)\s*=\s?(.*)$/.exec(tag[2]);
        if (p) current.parameters[p[1]] = p[2];
      }
    } else if (current) body.push(line);
  }
  flush();
  return out.filter((q) => q.text);
}
