// What one frame of the canvas renderer draws, in order: the links (with
// arrowheads), the link labels that fit, the nodes (with their halos, rings
// and pins), then the node labels placed where they overlap nothing. Each
// step reads the frame's state and draws on its 2D context.
import type { KipGraph, NodeAttrs } from './model';
import { edgeLabelsByDefault, labelPriority, placeLabels, showEdgeLabel, type LabelCandidate, type PlacedLabel, type Rect } from './labels';
import { LABEL_FONT, PATH_RING, type Decorations, type Theme } from './render-shared';

/** What the drawing steps read: the graph, the camera, the selection, the look. */
export interface Frame {
  ctx: CanvasRenderingContext2D;
  graph: KipGraph;
  /** The view's size in CSS pixels. */
  width: number;
  height: number;
  theme: Theme;
  decor: Decorations;
  /** The selected node, and what it keeps in full colour. */
  sel: string | null;
  near: Set<string>;
  hovered: string | null;
  /** The camera's scale, and the scale at which the whole graph fitted. */
  scale: number;
  base: number;
  /** The floating panels' boxes (labels avoid them). */
  rects: Rect[];
  toScreen(x: number, y: number): { x: number; y: number };
  radius(a: NodeAttrs): number;
  /** How new a node is, 1 to 0. */
  freshness(id: string): number;
  labelWidth(label: string): number;
  /** Nodes by size, largest first. */
  bySize(): [string, NodeAttrs][];
}

/** The links, and their arrowheads. Large graphs stroke all plain links in one path per style. */
export function drawEdges(f: Frame) {
  const { ctx, graph, sel } = f;
  const big = graph.order > 3000;
  ctx.lineCap = 'round';
  if (big) {
    const paths = new Map<string, Path2D>();
    graph.forEachEdge((_e, a, s, t, sa, ta) => {
      if (a.hidden || sa.hidden || ta.hidden) return;
      const touches = sel !== null && (s === sel || t === sel);
      const style = sel && !touches ? f.theme.dim : touches ? f.theme.accent : a.color;
      let path = paths.get(style);
      if (!path) paths.set(style, (path = new Path2D()));
      const p = f.toScreen(sa.x, sa.y);
      const q = f.toScreen(ta.x, ta.y);
      path.moveTo(p.x, p.y);
      path.lineTo(q.x, q.y);
    });
    ctx.globalAlpha = 0.6;
    ctx.lineWidth = 1;
    for (const [style, path] of paths) {
      ctx.strokeStyle = style;
      ctx.stroke(path);
    }
  } else graph.forEachEdge((e, a, s, t, sa, ta) => {
    if (a.hidden || sa.hidden || ta.hidden) return;
    const p = f.toScreen(sa.x, sa.y);
    const q = f.toScreen(ta.x, ta.y);
    const touches = sel !== null && (s === sel || t === sel);
    ctx.strokeStyle = (sel && !touches) || f.decor.dimmed(e) ? f.theme.dim : touches ? f.theme.accent : a.color;
    ctx.globalAlpha = a.anchor ? 0.6 : 0.85;
    ctx.lineWidth = touches ? a.size + 1 : a.size;
    ctx.beginPath();
    ctx.moveTo(p.x, p.y);
    ctx.lineTo(q.x, q.y);
    ctx.stroke();
    if (a.type === 'arrow' && !big) {
      const r = f.radius(ta);
      const ang = Math.atan2(q.y - p.y, q.x - p.x);
      const tipX = q.x - Math.cos(ang) * r;
      const tipY = q.y - Math.sin(ang) * r;
      ctx.fillStyle = ctx.strokeStyle;
      ctx.beginPath();
      ctx.moveTo(tipX, tipY);
      ctx.lineTo(tipX - Math.cos(ang - 0.4) * 8, tipY - Math.sin(ang - 0.4) * 8);
      ctx.lineTo(tipX - Math.cos(ang + 0.4) * 8, tipY - Math.sin(ang + 0.4) * 8);
      ctx.closePath();
      ctx.fill();
    }
  });
  ctx.globalAlpha = 1;
}

/**
 * Link labels: per predicate on or off, else only while the links on
 * screen are sparse enough to read them (and zoomed in enough). Returns how
 * many it drew.
 */
export function drawEdgeLabels(f: Frame): number {
  const { ctx, graph, sel } = f;
  let onScreen = 0;
  graph.forEachEdge((_, a, _s, _t, sa, ta) => {
    if (a.hidden || a.anchor || sa.hidden || ta.hidden) return;
    const p = f.toScreen(sa.x, sa.y);
    const q = f.toScreen(ta.x, ta.y);
    if (Math.max(p.x, q.x) >= 0 && Math.min(p.x, q.x) <= f.width && Math.max(p.y, q.y) >= 0 && Math.min(p.y, q.y) <= f.height) onScreen++;
  });
  const dense = !edgeLabelsByDefault(onScreen, f.width, f.height) || f.scale < f.base * 0.7;
  let drawn = 0;
  if (graph.size < 2000) {
    ctx.font = `11px ${LABEL_FONT}`;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    graph.forEachEdge((e, a, s, t, sa, ta) => {
      if (a.hidden || !a.label || sa.hidden || ta.hidden || f.decor.dimmed(e)) return;
      if (!showEdgeLabel(f.decor.edgeLabelMode(a.predicate), dense)) return;
      if (sel && s !== sel && t !== sel) return;
      const p = f.toScreen(sa.x, sa.y);
      const q = f.toScreen(ta.x, ta.y);
      const len = Math.hypot(q.x - p.x, q.y - p.y);
      if (len < ctx.measureText(a.label).width + 24) return;
      let ang = Math.atan2(q.y - p.y, q.x - p.x);
      if (ang > Math.PI / 2 || ang < -Math.PI / 2) ang += Math.PI;
      ctx.save();
      ctx.translate((p.x + q.x) / 2, (p.y + q.y) / 2);
      ctx.rotate(ang);
      ctx.fillStyle = f.theme.edgeLabel;
      ctx.fillText(a.label, 0, -6);
      ctx.restore();
      drawn++;
    });
  }
  return drawn;
}

/**
 * The shown nodes on screen: a fading halo on new ones, dimmed when the
 * selection leaves them out, ringed when selected, in the multiple
 * selection or marked, a dot when pinned. Returns whether any is still new
 * (the next frame must come to fade it).
 */
export function drawNodes(f: Frame): boolean {
  const { ctx, graph, sel } = f;
  const order: [string, NodeAttrs][] = [];
  graph.forEachNode((n, a) => {
    if (!a.hidden) order.push([n, a]);
  });
  let freshLeft = false;
  for (const [n, a] of order) {
    const p = f.toScreen(a.x, a.y);
    if (p.x < -20 || p.y < -20 || p.x > f.width + 20 || p.y > f.height + 20) continue;
    const r = f.radius(a);
    const fresh = f.freshness(n);
    if (fresh > 0) {
      // Just arrived: a fading halo, and never dimmed.
      freshLeft = true;
      ctx.strokeStyle = f.theme.accent;
      ctx.globalAlpha = 0.25 + 0.6 * fresh;
      ctx.lineWidth = 3;
      ctx.beginPath();
      ctx.arc(p.x, p.y, r + 5 + 3 * (1 - fresh), 0, Math.PI * 2);
      ctx.stroke();
      ctx.globalAlpha = 1;
    }
    const dimmed = (sel !== null && !f.near.has(n) && fresh === 0 && !f.decor.marked(n) && !f.decor.inSelection(n)) || (f.decor.dimmed(n) && n !== sel);
    ctx.fillStyle = dimmed ? f.theme.dim : a.color;
    ctx.beginPath();
    if (a.kind === 'link') {
      ctx.moveTo(p.x, p.y - r * 1.3);
      ctx.lineTo(p.x + r * 1.3, p.y);
      ctx.lineTo(p.x, p.y + r * 1.3);
      ctx.lineTo(p.x - r * 1.3, p.y);
      ctx.closePath();
    } else ctx.arc(p.x, p.y, r, 0, Math.PI * 2);
    ctx.fill();
    if (n === sel) {
      ctx.strokeStyle = f.theme.accent;
      ctx.lineWidth = 3;
      ctx.stroke();
    }
    if (f.decor.inSelection(n)) {
      // Apart from the fill, so it shows on nodes of the accent's hue too.
      ctx.strokeStyle = f.theme.accent;
      ctx.lineWidth = 2.5;
      ctx.setLineDash([4, 3]);
      ctx.beginPath();
      ctx.arc(p.x, p.y, r + 3.5, 0, Math.PI * 2);
      ctx.stroke();
      ctx.setLineDash([]);
    }
    if (f.decor.marked(n)) {
      ctx.strokeStyle = PATH_RING;
      ctx.lineWidth = 2.5;
      ctx.beginPath();
      ctx.arc(p.x, p.y, r + 4, 0, Math.PI * 2);
      ctx.stroke();
    }
    if (a.fixed) {
      ctx.fillStyle = f.theme.background;
      ctx.beginPath();
      ctx.arc(p.x, p.y, Math.max(1.5, r * 0.3), 0, Math.PI * 2);
      ctx.fill();
    }
  }
  return freshLeft;
}

/**
 * Node labels: placed by priority (selected, hovered, new, then by degree)
 * where they overlap no other label and no floating panel. Returns what it
 * placed.
 */
export function drawNodeLabels(f: Frame): PlacedLabel[] {
  const { ctx, graph, sel } = f;
  ctx.font = `500 13px ${LABEL_FONT}`;
  ctx.textAlign = 'left';
  ctx.textBaseline = 'middle';
  const showSmall = f.scale >= f.base * 0.5 || graph.order < 300;
  const candidates: LabelCandidate[] = [];
  for (const [n, a] of f.bySize()) {
    if (a.hidden || !a.label) continue;
    const fresh = f.freshness(n) > 0;
    if (sel && !f.near.has(n) && !fresh && !f.decor.marked(n) && !f.decor.inSelection(n)) continue;
    if (f.decor.dimmed(n) && n !== sel) continue;
    if (!showSmall && a.size <= 9 && n !== sel && n !== f.hovered && !fresh) continue;
    const p = f.toScreen(a.x, a.y);
    if (p.x < 0 || p.y < 0 || p.x > f.width || p.y > f.height) continue;
    if (candidates.length > 1500) break;
    candidates.push({
      id: n,
      x: p.x,
      y: p.y,
      r: f.radius(a),
      width: f.labelWidth(a.label),
      height: 16,
      priority: labelPriority({ selected: n === sel, hovered: n === f.hovered, fresh, degree: graph.degree(n), size: a.size }),
      force: n === sel || n === f.hovered,
    });
  }
  const discs = candidates.map((c) => ({ x: c.x - c.r, y: c.y - c.r, w: c.r * 2, h: c.r * 2 }));
  const placed = placeLabels(candidates, { width: f.width, height: f.height }, f.rects, 300, discs);
  for (const l of placed) {
    const a = graph.getNodeAttributes(l.id);
    ctx.fillStyle = f.theme.background;
    ctx.globalAlpha = 0.7;
    ctx.fillRect(l.box.x - 1, l.box.y + 1, l.box.w + 2, l.box.h - 2);
    ctx.globalAlpha = 1;
    ctx.fillStyle = f.theme.label;
    ctx.fillText(a.label, l.box.x, l.box.y + l.box.h / 2);
  }
  return placed;
}
