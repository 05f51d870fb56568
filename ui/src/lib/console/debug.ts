// The query debugger's logic, kept apart from the view so it can be tested:
// laying out the engine's pattern diagram, linking its elements with the
// plan's steps and the why-empty causes by source range, finding the
// element under a text position, and applying a suggested fix.
//
// Every range here comes from the engine in UTF-8 bytes (`offset`,
// `length`); the editor works in UTF-16 units, so conversions happen at
// the edges (`toEditorRange`, `utf16ToByte`). The UI never parses KIP: the
// diagram is the engine's (`explain.pattern`, or `validate`'s `pattern`
// while the user types).
import type { Cause, Explain, Fix, Pattern, Range, Step } from '../../transport';
import { byteToUtf16, utf16ToByte } from './assist';

export { utf16ToByte };

/** A range's identity: the engine uses the same spans for steps, causes and the diagram. */
export function rangeKey(r: Pick<Range, 'offset' | 'length'>): string {
  return `${r.offset}:${r.length}`;
}

/** An engine range as editor positions (UTF-16) in `text`. */
export function toEditorRange(text: string, r: Pick<Range, 'offset' | 'length'>): { from: number; to: number } {
  return { from: byteToUtf16(text, r.offset), to: byteToUtf16(text, r.offset + r.length) };
}

/** `text` with a fix applied. */
export function applyFix(text: string, fix: Fix): string {
  const { from, to } = toEditorRange(text, fix.range);
  return text.slice(0, from) + fix.replacement + text.slice(to);
}

/** What the debugger knows about one clause of the diagram. */
export interface ClauseInfo {
  key: string;
  range: Range;
  step?: Step;
  cause?: Cause;
}

/** The range of every clause, FILTER and nested block of a diagram. */
function ranges(pattern: Pattern): Range[] {
  return [
    ...pattern.nodes.flatMap((n) => n.clauses),
    ...pattern.edges.map((e) => e.clause),
    ...pattern.filters.map((f) => f.clause),
    ...pattern.blocks.filter((b) => b.kind !== 'where').map((b) => b.range),
  ];
}

/** Every clause, FILTER and nested block of a diagram, by range key, with its step and cause. */
export function clauses(pattern: Pattern, explain?: Explain | null): Map<string, ClauseInfo> {
  const out = new Map<string, ClauseInfo>();
  for (const range of ranges(pattern)) out.set(rangeKey(range), { key: rangeKey(range), range });
  for (const step of explain?.plan ?? []) {
    const info = out.get(rangeKey(step.clause));
    if (info) info.step = step;
  }
  for (const cause of explain?.why_empty ?? []) {
    const info = out.get(rangeKey(cause.clause));
    if (info) info.cause = cause;
  }
  return out;
}

/** The innermost clause whose range holds the byte `offset`, if any. */
export function clauseAt(pattern: Pattern, offset: number): string | null {
  let best: Range | null = null;
  for (const r of ranges(pattern)) {
    if (r.offset <= offset && offset < r.offset + r.length && (!best || r.length < best.length)) best = r;
  }
  return best ? rangeKey(best) : null;
}

export interface PlacedNode {
  id: number;
  x: number;
  y: number;
  width: number;
  label: string;
  detail: string;
  kind: 'concept' | 'proposition';
  /** The nested block it first appears in (`where` for the main block). */
  block: 'where' | 'not' | 'optional' | 'union';
  /** That block's range key (empty for the main block). */
  blockKey: string;
  /** The range keys of the clauses on this node. */
  keys: string[];
}

export interface PlacedEdge {
  id: number;
  from: PlacedNode;
  to: PlacedNode;
  label: string;
  block: 'where' | 'not' | 'optional' | 'union';
  blockKey: string;
  key: string;
  /** Index among the edges between the same two nodes, to bend parallels apart. */
  lane: number;
}

export interface Layout {
  nodes: PlacedNode[];
  edges: PlacedEdge[];
  width: number;
  height: number;
}

const ROW = 92;
const CHAR = 7.4;
/** An edge label's character width (11.5px monospace) and the room kept around it. */
const LABEL_CHAR = 7;
const LABEL_ROOM = 28;
/** The least gap between two columns of boxes. */
const MIN_GAP = 64;

/**
 * Where each column's boxes are centred: a column is as wide as its widest
 * box, and the gap after it as wide as the longest label of an edge to the
 * next column, so a label sits between the boxes, not over them.
 */
function columnStarts(pattern: Pattern, column: Map<number, number>, widthOf: (id: number) => number): { centre: number }[] {
  const columns = Math.max(0, ...column.values()) + 1;
  const widths = new Array<number>(columns).fill(84);
  for (const [id, c] of column) widths[c] = Math.max(widths[c], widthOf(id));
  const gaps = new Array<number>(columns).fill(MIN_GAP);
  for (const e of pattern.edges) {
    const [a, b] = [column.get(e.from) ?? 0, column.get(e.to) ?? 0].sort((x, y) => x - y);
    if (b !== a + 1) continue;
    const label = `${e.predicate}${e.hops ?? ''}`.length + 8; // room for a block tag ("NOT · ")
    gaps[a] = Math.max(gaps[a], label * LABEL_CHAR + LABEL_ROOM);
  }
  const out: { centre: number }[] = [];
  let x = 40;
  for (let c = 0; c < columns; c++) {
    out.push({ centre: x + widths[c] / 2 });
    x += widths[c] + gaps[c];
  }
  return out;
}

/**
 * Places the diagram left to right: a node's column is its distance from the
 * first node over the edges (ignoring direction), so a chain of clauses reads
 * as a chain; disconnected parts follow below. Deterministic, so the diagram
 * does not jump while the user types.
 */
export function layoutPattern(pattern: Pattern): Layout {
  const blockKind = (b: number) => pattern.blocks[b]?.kind ?? 'where';
  const blockKey = (b: number) => (b > 0 && pattern.blocks[b] ? rangeKey(pattern.blocks[b].range) : '');
  const adjacent = new Map<number, number[]>();
  const link = (a: number, b: number) => {
    adjacent.set(a, [...(adjacent.get(a) ?? []), b]);
    adjacent.set(b, [...(adjacent.get(b) ?? []), a]);
  };
  for (const e of pattern.edges) {
    link(e.from, e.to);
    if (e.node !== undefined) link(e.node, e.from);
  }
  const column = new Map<number, number>();
  const order: number[] = [];
  let base = 0;
  for (const start of pattern.nodes) {
    if (column.has(start.id)) continue;
    const queue = [start.id];
    column.set(start.id, base);
    while (queue.length) {
      const n = queue.shift()!;
      order.push(n);
      for (const m of adjacent.get(n) ?? []) {
        if (!column.has(m)) {
          column.set(m, (column.get(n) ?? 0) + 1);
          queue.push(m);
        }
      }
    }
    base = 0;
  }
  const detailOf = (id: number) => {
    const n = pattern.nodes[id];
    return n.var ? [n.type, n.name !== undefined ? JSON.stringify(n.name) : undefined].filter(Boolean).join(' ') : n.kind === 'proposition' ? 'link' : '';
  };
  const widthOf = (id: number) => Math.max(84, Math.min(200, Math.max(pattern.nodes[id].label.length, detailOf(id).length) * CHAR + 28));
  const columnX = columnStarts(pattern, column, widthOf);
  const rowsInColumn = new Map<number, number>();
  const nodes: PlacedNode[] = [];
  const byId = new Map<number, PlacedNode>();
  for (const id of order) {
    const n = pattern.nodes[id];
    const c = column.get(id) ?? 0;
    const r = rowsInColumn.get(c) ?? 0;
    rowsInColumn.set(c, r + 1);
    const detail = detailOf(id);
    const width = widthOf(id);
    const placed: PlacedNode = {
      id,
      x: columnX[c].centre,
      y: 44 + r * ROW,
      width,
      label: n.label,
      detail,
      kind: n.kind,
      block: blockKind(n.block),
      blockKey: blockKey(n.block),
      keys: n.clauses.map(rangeKey),
    };
    nodes.push(placed);
    byId.set(id, placed);
  }
  const lanes = new Map<string, number>();
  const edges: PlacedEdge[] = pattern.edges.map((e) => {
    const pair = [Math.min(e.from, e.to), Math.max(e.from, e.to)].join('-');
    const lane = lanes.get(pair) ?? 0;
    lanes.set(pair, lane + 1);
    return {
      id: e.id,
      from: byId.get(e.from)!,
      to: byId.get(e.to)!,
      label: `${e.predicate}${e.hops ?? ''}`,
      block: blockKind(e.block),
      blockKey: blockKey(e.block),
      key: rangeKey(e.clause),
      lane,
    };
  });
  const width = Math.max(320, ...nodes.map((n) => n.x + n.width / 2 + 40));
  const height = Math.max(120, ...nodes.map((n) => n.y + 60));
  return { nodes, edges, width, height };
}

/** What a step did, in a few words: `4 → 0 rows`, `removed 3`, … */
export function stepSummary(step: Step): string {
  const d = step.detail ?? {};
  switch (step.kind) {
    case 'not':
      return `${step.rows_in} → ${step.rows_out} rows (removed ${d.rows_removed ?? step.rows_in - step.rows_out})`;
    case 'optional':
      return `${step.rows_in} → ${step.rows_out} rows (${d.rows_extended ?? 0} extended, ${d.rows_padded ?? 0} padded)`;
    case 'union':
      return `+${d.branch_rows ?? step.rows_out - step.rows_in} rows from the branch`;
    case 'path': {
      const extra = [d.nodes_visited !== undefined ? `${d.nodes_visited} visited` : '', d.depth_reached !== undefined ? `depth ${d.depth_reached}` : ''].filter(Boolean).join(', ');
      return `${step.rows_in} → ${step.rows_out} rows${extra ? ` (${extra})` : ''}`;
    }
    default:
      return `${step.rows_in} → ${step.rows_out} rows`;
  }
}

/** Reasons in words a person scans quickly (the engine's `message` has the detail). */
export const REASONS: Record<string, string> = {
  unknown_type: 'Unknown type',
  unknown_predicate: 'Unknown predicate',
  unknown_name: 'Nothing has this name',
  name_under_other_type: 'Name exists under another type',
  name_differs_in_case_or_spacing: 'Name differs in case or spacing',
  similar_name: 'Misspelt name',
  no_instances: 'No instances of this type',
  no_links: 'No such links at all',
  opposite_direction: 'Link exists in the opposite direction',
  path_too_short: 'Hop range misses the links',
  no_join: 'Joins nothing from the earlier clauses',
  filter_removed_all: 'FILTER removed every row',
  not_removed_all: 'NOT removed every row',
  type_mismatch: 'Bound to concepts of another type',
};

/** The sample's columns: every variable any sample row binds, in first-seen order. */
export function sampleColumns(step: Step): string[] {
  const seen = new Set<string>();
  for (const row of step.sample) for (const k of Object.keys(row)) seen.add(k);
  return [...seen];
}
