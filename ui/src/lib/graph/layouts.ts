// The layouts besides the force-directed one (Bloom's and Memgraph Lab's
// choice of arrangement): hierarchical (layers along the links' direction),
// radial (rings of distance around one node) and grouped by type (one
// cluster per concept type). Pure: each returns a place per visible node,
// in graph units (y grows upwards); the view sets them and frames the
// result. The force layout stays layout.ts's (a worker).
import type { KipGraph } from './model';

export type LayoutKind = 'force' | 'hierarchical' | 'radial' | 'grouped';

export const LAYOUTS: { kind: LayoutKind; label: string }[] = [
  { kind: 'force', label: 'Force' },
  { kind: 'hierarchical', label: 'Hierarchical' },
  { kind: 'radial', label: 'Radial (around the selected)' },
  { kind: 'grouped', label: 'Grouped by type' },
];

export const isLayoutKind = (v: unknown): v is LayoutKind => LAYOUTS.some((l) => l.kind === v);

/** Distance between neighbouring places, in graph units. */
const STEP = 10;

type Places = Map<string, { x: number; y: number }>;

function shown(graph: KipGraph): string[] {
  return graph.filterNodes((_, a) => !a.hidden);
}

/** Visible neighbours of `id` along shown links (either direction, anchors included). */
function neighbours(graph: KipGraph, id: string): string[] {
  const out = new Set<string>();
  graph.forEachEdge(id, (_e, a, s, t, sa, ta) => {
    if (a.hidden || sa.hidden || ta.hidden) return;
    out.add(s === id ? t : s);
  });
  out.delete(id);
  return [...out];
}

/**
 * Layers along the links' direction: a node's layer is the longest chain
 * of links leading to it from a node nothing points at (cycles broken
 * where they close). Layer 0 on top; each layer's nodes ordered by the
 * mean place of their parents, so links cross less.
 */
export function hierarchical(graph: KipGraph): Places {
  const nodes = shown(graph);
  const set = new Set(nodes);
  const layer = new Map<string, number>();
  const parents = new Map<string, string[]>();
  for (const n of nodes) parents.set(n, []);
  graph.forEachEdge((_e, a, s, t) => {
    if (a.hidden || !set.has(s) || !set.has(t) || s === t) return;
    parents.get(t)?.push(s);
  });
  // Longest path by depth-first search; a node on the stack closes a cycle and counts as a root.
  const onStack = new Set<string>();
  const depth = (n: string): number => {
    const known = layer.get(n);
    if (known !== undefined) return known;
    onStack.add(n);
    let d = 0;
    for (const p of parents.get(n) ?? []) if (!onStack.has(p)) d = Math.max(d, depth(p) + 1);
    onStack.delete(n);
    layer.set(n, d);
    return d;
  };
  for (const n of nodes) depth(n);
  const layers: string[][] = [];
  for (const n of nodes) (layers[layer.get(n) ?? 0] ??= []).push(n);
  const places: Places = new Map();
  const widest = Math.max(1, ...layers.map((l) => l?.length ?? 0));
  layers.forEach((row, i) => {
    if (!row) return;
    const key = (n: string) => {
      const ps = (parents.get(n) ?? []).map((p) => places.get(p)?.x).filter((x): x is number => x !== undefined);
      return ps.length ? ps.reduce((a, b) => a + b, 0) / ps.length : 0;
    };
    row.sort((a, b) => key(a) - key(b) || a.localeCompare(b));
    const gap = (STEP * 1.6 * widest) / Math.max(row.length, 1);
    row.forEach((n, j) => places.set(n, { x: (j - (row.length - 1) / 2) * Math.min(gap, STEP * 3), y: -i * STEP * 2.5 }));
  });
  return places;
}

/**
 * Rings around `centre`: each node at its distance in links (nodes it
 * cannot reach on the outermost ring), spread evenly on its ring, children
 * kept near their parent's angle.
 */
export function radial(graph: KipGraph, centre: string | null): Places {
  const nodes = shown(graph);
  const start = centre && nodes.includes(centre) ? centre : [...nodes].sort((a, b) => graph.degree(b) - graph.degree(a))[0];
  const places: Places = new Map();
  if (!start) return places;
  const dist = new Map<string, number>([[start, 0]]);
  const parent = new Map<string, string>();
  const queue = [start];
  while (queue.length) {
    const n = queue.shift() as string;
    for (const m of neighbours(graph, n)) {
      if (dist.has(m)) continue;
      dist.set(m, (dist.get(n) ?? 0) + 1);
      parent.set(m, n);
      queue.push(m);
    }
  }
  const far = Math.max(0, ...dist.values()) + 1;
  for (const n of nodes) if (!dist.has(n)) dist.set(n, far);
  const rings: string[][] = [];
  for (const n of nodes) (rings[dist.get(n) ?? far] ??= []).push(n);
  const angle = new Map<string, number>([[start, 0]]);
  places.set(start, { x: 0, y: 0 });
  rings.forEach((ring, i) => {
    if (!ring || i === 0) return;
    ring.sort((a, b) => (angle.get(parent.get(a) ?? '') ?? 0) - (angle.get(parent.get(b) ?? '') ?? 0) || a.localeCompare(b));
    // Each ring's circumference holds its nodes at least a step apart.
    const r = Math.max(i * STEP * 2.2, (ring.length * STEP * 1.2) / (2 * Math.PI));
    ring.forEach((n, j) => {
      const a = (2 * Math.PI * j) / ring.length;
      angle.set(n, a);
      places.set(n, { x: r * Math.cos(a), y: r * Math.sin(a) });
    });
  });
  return places;
}

/**
 * One cluster per concept type (link nodes with their own kind), laid in
 * a grid of cells, the largest type first; inside a cell the nodes sit on
 * a sunflower spiral, evenly apart.
 */
export function grouped(graph: KipGraph): Places {
  const groups = new Map<string, string[]>();
  for (const n of shown(graph)) {
    const t = graph.getNodeAttribute(n, 'kipType');
    const g = groups.get(t);
    if (g) g.push(n);
    else groups.set(t, [n]);
  }
  const ordered = [...groups].sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0]));
  const radiusOf = (count: number) => STEP * 0.9 * Math.sqrt(count) + STEP;
  const cell = 2 * Math.max(...ordered.map(([, g]) => radiusOf(g.length)), STEP) + STEP * 2;
  const cols = Math.max(1, Math.ceil(Math.sqrt(ordered.length)));
  const places: Places = new Map();
  ordered.forEach(([, members], i) => {
    const cx = (i % cols) * cell;
    const cy = -Math.floor(i / cols) * cell;
    members.sort((a, b) => graph.degree(b) - graph.degree(a) || a.localeCompare(b));
    members.forEach((n, j) => {
      const r = STEP * 0.9 * Math.sqrt(j);
      const a = j * 2.399963; // the golden angle
      places.set(n, { x: cx + r * Math.cos(a), y: cy + r * Math.sin(a) });
    });
  });
  return places;
}

/** Places for `kind` (force is the worker's: none here). */
export function placesFor(kind: LayoutKind, graph: KipGraph, selected: string | null): Places | null {
  switch (kind) {
    case 'force':
      return null;
    case 'hierarchical':
      return hierarchical(graph);
    case 'radial':
      return radial(graph, selected);
    case 'grouped':
      return grouped(graph);
  }
}
