// Where the graph's labels go: pure functions both renderers' callers can
// test without a canvas.
//
// Node labels are placed by priority (the selected node, the hovered one,
// newly arrived ones, then by degree) at the first of four positions around
// the node (right, left, below, above) whose box overlaps no label placed
// before it and no floating panel; a label with no free position is left
// out rather than drawn over another (or over another node). Edge labels are shown by default only
// while the links on screen are sparse enough to read them, and each
// predicate can be switched on or off whatever the density.

export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface LabelCandidate {
  id: string;
  /** The node's centre and radius on screen. */
  x: number;
  y: number;
  r: number;
  /** The label's size in pixels. */
  width: number;
  height: number;
  /** Higher is placed first. */
  priority: number;
  /** Placed even when it overlaps (the selected node's label). */
  force?: boolean;
}

export interface PlacedLabel {
  id: string;
  /** The box's top-left corner; text is drawn left-aligned in it. */
  box: Rect;
}

/** Priority of a node label: selected, hovered, new, then by degree and size. */
export function labelPriority(o: { selected?: boolean; hovered?: boolean; fresh?: boolean; degree: number; size: number }): number {
  return (o.selected ? 4e9 : 0) + (o.hovered ? 2e9 : 0) + (o.fresh ? 1e9 : 0) + o.degree * 1000 + o.size;
}

const overlaps = (a: Rect, b: Rect) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

/**
 * Places labels without overlaps, highest priority first, inside `bounds`
 * and off `obstacles` (floating panels); at most `max` labels. Runs in
 * about linear time: placed boxes are kept in a coarse grid of buckets.
 */
export function placeLabels(
  candidates: LabelCandidate[],
  bounds: { width: number; height: number },
  obstacles: Rect[] = [],
  max = 300,
  nodes: Rect[] = [],
): PlacedLabel[] {
  const cell = 64;
  const grid = new Map<number, Rect[]>();
  const keys = (r: Rect) => {
    const out: number[] = [];
    for (let cx = Math.floor(r.x / cell); cx <= Math.floor((r.x + r.w) / cell); cx++)
      for (let cy = Math.floor(r.y / cell); cy <= Math.floor((r.y + r.h) / cell); cy++) out.push(cy * 100_003 + cx);
    return out;
  };
  const free = (r: Rect) => {
    if (r.x < 0 || r.y < 0 || r.x + r.w > bounds.width || r.y + r.h > bounds.height) return false;
    if (obstacles.some((o) => overlaps(o, r))) return false;
    for (const k of keys(r)) for (const o of grid.get(k) ?? []) if (overlaps(o, r)) return false;
    return true;
  };
  const take = (r: Rect) => {
    for (const k of keys(r)) {
      const bucket = grid.get(k);
      if (bucket) bucket.push(r);
      else grid.set(k, [r]);
    }
  };
  // Nodes are taken first: no label hides a node.
  for (const n of nodes) take(n);
  const placed: PlacedLabel[] = [];
  const sorted = [...candidates].sort((a, b) => b.priority - a.priority);
  for (const c of sorted) {
    if (placed.length >= max) break;
    const gap = 3;
    const spots: Rect[] = [
      { x: c.x + c.r + gap, y: c.y - c.height / 2, w: c.width, h: c.height },
      { x: c.x - c.r - gap - c.width, y: c.y - c.height / 2, w: c.width, h: c.height },
      { x: c.x - c.width / 2, y: c.y + c.r + gap, w: c.width, h: c.height },
      { x: c.x - c.width / 2, y: c.y - c.r - gap - c.height, w: c.width, h: c.height },
    ];
    const spot = spots.find(free) ?? (c.force ? spots[0] : undefined);
    if (!spot) continue;
    take(spot);
    placed.push({ id: c.id, box: spot });
  }
  return placed;
}

/** Links per 100,000 square pixels above which edge labels are hidden by default. */
export const EDGE_LABEL_DENSITY = 6;

export type EdgeLabelMode = 'auto' | 'on' | 'off';

/** Whether edge labels in `auto` mode are shown for this many links on this much screen. */
export function edgeLabelsByDefault(visibleEdges: number, width: number, height: number): boolean {
  const area = Math.max(1, width * height) / 100_000;
  return visibleEdges / area <= EDGE_LABEL_DENSITY;
}

/** Whether one link's label is drawn. */
export function showEdgeLabel(mode: EdgeLabelMode, dense: boolean): boolean {
  return mode === 'on' || (mode === 'auto' && !dense);
}

/** The most room a fit leaves for labels right of the box (a longer label is cut anyway). */
export const MAX_LABEL_ROOM = 240;

/**
 * The room, in pixels, that labels need right of a framed box: a label is
 * drawn right of its node, so the rightmost node's label (of width
 * `labelWidth`, past a node of radius `radius`) must fit too, up to
 * {@link MAX_LABEL_ROOM}.
 */
export function labelRoom(labelWidth: number, radius: number): number {
  if (!(labelWidth > 0)) return 0;
  return Math.min(MAX_LABEL_ROOM, labelWidth + radius + 6);
}

/**
 * The camera's target when the graph must fit in the part of the view no
 * floating panel covers: the box of the nodes, scaled to the free area and
 * centred in it, with `right` pixels kept free right of the box for the
 * rightmost node's label ({@link labelRoom}). Screen y grows downwards,
 * graph y upwards.
 */
export function frameBox(
  box: { minX: number; maxX: number; minY: number; maxY: number },
  view: { width: number; height: number },
  insets: { top: number; right: number; bottom: number; left: number },
  pad = 40,
  maxScale = 60,
  right = 0,
): { x: number; y: number; scale: number } {
  const freeW = Math.max(40, view.width - insets.left - insets.right - pad * 2 - right);
  const freeH = Math.max(40, view.height - insets.top - insets.bottom - pad * 2);
  const w = Math.max(box.maxX - box.minX, 1);
  const h = Math.max(box.maxY - box.minY, 1);
  const s = Math.min(freeW / w, freeH / h, maxScale);
  const scale = Number.isFinite(s) && s > 0 ? s : 1;
  // The free area's centre (less the label room), as an offset from the
  // view's centre in pixels.
  const dx = (insets.left - insets.right - right) / 2;
  const dy = (insets.top - insets.bottom) / 2;
  return {
    x: (box.minX + box.maxX) / 2 - dx / scale,
    y: (box.minY + box.maxY) / 2 + dy / scale,
    scale,
  };
}
