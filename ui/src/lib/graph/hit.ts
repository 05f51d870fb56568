// What lies under a point of the graph view (for the context menu): the
// nearest shown node within its radius, else the nearest shown link within
// a few pixels. Works on either renderer through its drawn positions.
import { graphModel } from '../state.svelte';
import type { GraphRenderer } from './renderer';

/** Where the context menu opens, and on what. */
export interface MenuTarget {
  id: string;
  x: number;
  y: number;
}

function segmentDistance(px: number, py: number, a: { x: number; y: number }, b: { x: number; y: number }): number {
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  const len = dx * dx + dy * dy;
  const t = len ? Math.max(0, Math.min(1, ((px - a.x) * dx + (py - a.y) * dy) / len)) : 0;
  return Math.hypot(px - (a.x + t * dx), py - (a.y + t * dy));
}

/** The node or link drawn at (x, y) in the container's CSS pixels, or null. */
export function elementAt(r: GraphRenderer, x: number, y: number): string | null {
  const g = graphModel.graph;
  let best: string | null = null;
  let bestD = Infinity;
  g.forEachNode((id, a) => {
    if (a.hidden) return;
    const p = r.nodeViewportPosition(id);
    if (!p) return;
    const d = Math.hypot(p.x - x, p.y - y);
    if (d <= Math.max(8, a.size + 4) && d < bestD) {
      best = id;
      bestD = d;
    }
  });
  if (best) return best;
  bestD = 6;
  g.forEachEdge((id, a, s, t, sa, ta) => {
    if (a.hidden || a.anchor || sa.hidden || ta.hidden) return;
    const p = r.nodeViewportPosition(s);
    const q = r.nodeViewportPosition(t);
    if (!p || !q) return;
    const d = segmentDistance(x, y, p, q);
    if (d < bestD) {
      best = id;
      bestD = d;
    }
  });
  return best;
}

/** The menu's place for a point: inside the container, clear of its right and bottom edges. */
export function menuPlace(id: string, x: number, y: number, container: HTMLElement): MenuTarget {
  const { width, height } = container.getBoundingClientRect();
  return { id, x: Math.max(4, Math.min(x + 4, width - 330)), y: Math.max(4, Math.min(y + 4, height - 320)) };
}

/** Where the keyboard opens the menu on an element: beside the node, or at the link's middle. */
export function elementPoint(r: GraphRenderer, id: string): { x: number; y: number } | null {
  const g = graphModel.graph;
  if (g.hasNode(id)) return r.nodeViewportPosition(id);
  if (!g.hasEdge(id)) return null;
  const [s, t] = g.extremities(id);
  const p = r.nodeViewportPosition(s);
  const q = r.nodeViewportPosition(t);
  return p && q ? { x: (p.x + q.x) / 2, y: (p.y + q.y) / 2 } : null;
}
