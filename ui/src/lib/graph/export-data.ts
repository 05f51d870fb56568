// The view's data (issue 33 §6, Bloom's "export the scene as a table"):
// what the graph shows — its concepts and its links, not what the filters
// hide — as CSV (one row per element, a `kind` column, one column per key
// attribute) or JSON (the elements with all their attributes and metadata).
import { isConcept, type ConceptNode, type Element, type Json, type PropositionLink } from '../kip';
import { graphModel, reportError } from '../state.svelte';
import { saveFile } from '../save';
import { exportFileName, pictureTitle } from './export-image';

/** The metadata a curator reads first, as columns of their own. */
const KEY_METADATA = ['confidence', 'source', 'author', 'expires_at', 'memory_tier'];
/** At most this many attribute columns (the most common keys). */
const MAX_ATTRIBUTE_COLUMNS = 24;

export interface ViewData {
  concepts: ConceptNode[];
  links: PropositionLink[];
}

/** The shown elements: concepts drawn as visible nodes, links drawn as visible edges. */
export function viewData(): ViewData {
  const concepts: ConceptNode[] = [];
  const links: PropositionLink[] = [];
  const g = graphModel.graph;
  for (const [id, e] of graphModel.elements) {
    if (isConcept(e)) {
      if (g.hasNode(id) && !g.getNodeAttribute(id, 'hidden')) concepts.push(e);
    } else if (g.hasEdge(id) && !g.getEdgeAttribute(id, 'hidden')) {
      const [s, t] = g.extremities(id);
      if (!g.getNodeAttribute(s, 'hidden') && !g.getNodeAttribute(t, 'hidden')) links.push(e);
    }
  }
  return { concepts, links };
}

const text = (v: Json | undefined): string => (v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v));
const quote = (s: string) => (/[",\r\n]/.test(s) || /^\s|\s$/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

/** The attribute keys the elements hold, most common first (bounded). */
function attributeKeys(elements: Element[]): string[] {
  const counts = new Map<string, number>();
  for (const e of elements) for (const k of Object.keys(e.attributes)) counts.set(k, (counts.get(k) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, MAX_ATTRIBUTE_COLUMNS).map(([k]) => k);
}

/** The view as one table: a header and a row of text cells per element (concepts, then links). */
export interface ViewTable {
  header: string[];
  rows: { id: string; cells: string[] }[];
}

/** kind, id, type, name (concepts); subject, predicate, object (links); key metadata; attributes. */
export function dataTable(d: ViewData): ViewTable {
  const attrs = attributeKeys([...d.concepts, ...d.links]).filter((k) => !['name', 'type', 'id'].includes(k));
  const header = ['kind', 'id', 'type', 'name', 'subject', 'predicate', 'object', ...KEY_METADATA, ...attrs];
  const names = new Map(d.concepts.map((c) => [c.id, c.name]));
  const row = (e: Element): string[] => {
    const own = isConcept(e)
      ? ['concept', e.id, e.type, e.name, '', '', '']
      : ['link', e.id, '', '', names.get(e.subject) ?? e.subject, e.predicate, names.get(e.object) ?? e.object];
    return [...own, ...KEY_METADATA.map((k) => text(e.metadata[k])), ...attrs.map((k) => text(e.attributes[k]))];
  };
  return { header, rows: [...d.concepts, ...d.links].map((e) => ({ id: e.id, cells: row(e) })) };
}

/** RFC 4180 CSV of [`dataTable`]. */
export function dataCsv(d: ViewData): string {
  const t = dataTable(d);
  const lines = [t.header, ...t.rows.map((r) => r.cells)].map((r) => r.map(quote).join(','));
  return lines.join('\r\n') + '\r\n';
}

/** JSON: the view's title and time, its concepts and links with every attribute and metadata key. */
export function dataJson(d: ViewData, now = new Date()): string {
  return JSON.stringify(
    {
      title: pictureTitle(),
      exported_at: now.toISOString(),
      concepts: d.concepts.map((c) => ({ id: c.id, type: c.type, name: c.name, attributes: c.attributes, metadata: c.metadata })),
      links: d.links.map((l) => ({ id: l.id, subject: l.subject, predicate: l.predicate, object: l.object, attributes: l.attributes, metadata: l.metadata })),
    },
    null,
    2,
  );
}

/** Saves the view's data as CSV or JSON. */
export async function exportData(format: 'csv' | 'json') {
  const d = viewData();
  try {
    if (format === 'csv') await saveFile(exportFileName('csv'), dataCsv(d), 'text/csv;charset=utf-8');
    else await saveFile(exportFileName('json'), dataJson(d), 'application/json');
  } catch (e) {
    reportError(e, `Exporting ${format.toUpperCase()} failed`);
  }
}
