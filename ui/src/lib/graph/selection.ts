// Multiple selection in the graph view: shift-click and the lasso. Pure
// geometry over the nodes' drawn positions, so both renderers share it.

export interface Point {
  x: number;
  y: number;
}

/** Whether `p` lies inside the polygon (even-odd rule; the polygon closes itself). */
export function insidePolygon(p: Point, polygon: Point[]): boolean {
  let inside = false;
  for (let i = 0, j = polygon.length - 1; i < polygon.length; j = i++) {
    const a = polygon[i];
    const b = polygon[j];
    if (a.y > p.y !== b.y > p.y && p.x < ((b.x - a.x) * (p.y - a.y)) / (b.y - a.y) + a.x) inside = !inside;
  }
  return inside;
}

/** The nodes drawn inside a lasso. */
export function lassoed(nodes: { id: string; at: Point | null }[], polygon: Point[]): string[] {
  if (polygon.length < 3) return [];
  return nodes.filter((n) => n.at && insidePolygon(n.at, polygon)).map((n) => n.id);
}

/** The node drawn nearest to `p`, if one is within `radius` pixels of it. */
export function nearest(nodes: { id: string; at: Point | null; r?: number }[], p: Point, radius = 10): string | null {
  let best: string | null = null;
  let bestD = Infinity;
  for (const n of nodes) {
    if (!n.at) continue;
    const d = Math.hypot(n.at.x - p.x, n.at.y - p.y);
    if (d <= Math.max(radius, (n.r ?? 0) + 3) && d < bestD) {
      best = n.id;
      bestD = d;
    }
  }
  return best;
}

/** Adds `id` to the selection, or takes it out when it is there. */
export function toggle(selection: string[], id: string): string[] {
  return selection.includes(id) ? selection.filter((x) => x !== id) : [...selection, id];
}
