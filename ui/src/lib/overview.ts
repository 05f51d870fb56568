// A large memory's first view (issue 31 §9): the schema map's geometry and
// the way from it into the graph. The engine counts (`schema_map`); this
// places the types on a circle and draws each (subject type, predicate,
// object type) as one curved, counted edge.
import type { EdgeCount, SchemaMap, TypeCount } from '../transport';
import type { Json } from './kip';
import { api, app, fetchElements, showResultInGraph } from './state.svelte';

/** The map shows at most this many types (the largest). */
export const MAX_TYPES = 30;
/** Edges labelled on the map (the most counted); the rest say it on hover. */
export const LABELLED_EDGES = 24;

export interface PlacedType extends TypeCount {
  x: number;
  y: number;
  r: number;
}

export interface PlacedEdge extends EdgeCount {
  path: string;
  labelX: number;
  labelY: number;
  width: number;
  labelled: boolean;
  membership: boolean;
}

/** The drawing's size when its box is not measured yet. */
export const WIDTH = 1200;
export const HEIGHT = 720;

/**
 * The types placed by a small force layout (linked types pulled together,
 * all pushed apart; domain membership pulls only lightly), started on a
 * circle, largest first, and scaled to fill the drawing; each sized by the
 * square root of its count. Deterministic: the same map draws the same.
 */
export function placeTypes(types: TypeCount[], edges: EdgeCount[] = [], width = WIDTH, height = HEIGHT): PlacedType[] {
  const shown = types.slice(0, MAX_TYPES);
  const max = Math.max(1, ...shown.map((t) => t.count));
  const n = shown.length;
  const pos = shown.map((_, i) => {
    const angle = -Math.PI / 2 + (2 * Math.PI * i) / Math.max(1, n);
    return { x: 300 * Math.cos(angle), y: 300 * Math.sin(angle) };
  });
  const index = new Map(shown.map((t, i) => [t.name, i]));
  // One spring per linked pair, however many predicates join it.
  const pairs = new Map<string, [number, number, number]>();
  for (const e of edges) {
    const a = index.get(e.subject_type);
    const b = index.get(e.object_type);
    if (a === undefined || b === undefined || a === b) continue;
    const key = a < b ? `${a} ${b}` : `${b} ${a}`;
    const w = e.predicate === 'belongs_to_domain' ? 0.15 : 1;
    pairs.set(key, [a, b, Math.max(w, pairs.get(key)?.[2] ?? 0)]);
  }
  const springs = [...pairs.values()];
  const k = 260;
  for (let step = 0; step < 300 && n > 1; step++) {
    const temp = 40 * (1 - step / 300) + 1;
    const disp = pos.map(() => ({ x: 0, y: 0 }));
    for (let i = 0; i < n; i++)
      for (let j = i + 1; j < n; j++) {
        const dx = pos[i].x - pos[j].x;
        const dy = pos[i].y - pos[j].y;
        const d = Math.max(1, Math.hypot(dx, dy));
        const f = (k * k) / d / d;
        disp[i].x += dx * f; disp[i].y += dy * f;
        disp[j].x -= dx * f; disp[j].y -= dy * f;
      }
    for (const [a, b, w] of springs) {
      const dx = pos[a].x - pos[b].x;
      const dy = pos[a].y - pos[b].y;
      const f = (w * Math.hypot(dx, dy)) / (2.5 * k);
      disp[a].x -= dx * f; disp[a].y -= dy * f;
      disp[b].x += dx * f; disp[b].y += dy * f;
    }
    // Gravity, a spring to the centre: unlinked types stay near the rest.
    for (let i = 0; i < n; i++) {
      const f = (0.3 * Math.hypot(pos[i].x, pos[i].y)) / k;
      disp[i].x -= pos[i].x * f;
      disp[i].y -= pos[i].y * f;
    }
    for (let i = 0; i < n; i++) {
      const len = Math.max(1e-9, Math.hypot(disp[i].x, disp[i].y));
      const m = Math.min(len, temp);
      pos[i].x += (disp[i].x / len) * m;
      pos[i].y += (disp[i].y / len) * m;
    }
  }
  // Stretch into the drawing (each axis on its own: the drawing is wider
  // than tall), room left for labels.
  const xs = pos.map((p) => p.x);
  const ys = pos.map((p) => p.y);
  const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  const sx = Math.min(Math.max(40, width - 200) / Math.max(1, x1 - x0), 3);
  const sy = Math.min(Math.max(40, height - 190) / Math.max(1, y1 - y0), 3);
  return shown.map((t, i) => ({
    ...t,
    x: width / 2 + (pos[i].x - (x0 + x1) / 2) * sx,
    y: height / 2 + 10 + (pos[i].y - (y0 + y1) / 2) * sy,
    r: 10 + 30 * Math.sqrt(t.count / max),
  }));
}

const unit = (dx: number, dy: number) => {
  const d = Math.hypot(dx, dy) || 1;
  return [dx / d, dy / d];
};

/** The edges between placed types: a curve per edge, fanned out where several join one pair. */
export function placeEdges(edges: EdgeCount[], types: PlacedType[]): PlacedEdge[] {
  const at = new Map(types.map((t) => [t.name, t]));
  const max = Math.max(2, ...edges.map((e) => e.count));
  const fan = new Map<string, number>();
  const out: PlacedEdge[] = [];
  for (const e of edges) {
    const a = at.get(e.subject_type);
    const b = at.get(e.object_type);
    if (!a || !b) continue;
    const pair = [e.subject_type, e.object_type].sort().join('\u0000');
    const k = fan.get(pair) ?? 0;
    fan.set(pair, k + 1);
    const width = 1 + 3 * (Math.log10(e.count + 1) / Math.log10(max + 1));
    const membership = e.predicate === 'belongs_to_domain';
    // A label fits beside a curve longer than the circles at its ends.
    const room = a === b || Math.hypot(b.x - a.x, b.y - a.y) > a.r + b.r + 70;
    const labelled = !membership && room && out.filter((x) => x.labelled).length < LABELLED_EDGES;
    if (a === b) {
      const lift = a.r * 2.4 + k * 16;
      const path = `M ${a.x - a.r * 0.6} ${a.y - a.r * 0.8} C ${a.x - a.r * 1.8 - k * 8} ${a.y - lift} ${a.x + a.r * 1.8 + k * 8} ${a.y - lift} ${a.x + a.r * 0.6} ${a.y - a.r * 0.8}`;
      out.push({ ...e, path, labelX: a.x, labelY: a.y - lift * 0.78, width, labelled, membership });
      continue;
    }
    // Control point off the chord's middle, on the side of the direction.
    const [ux, uy] = unit(b.x - a.x, b.y - a.y);
    const side = e.subject_type < e.object_type ? 1 : -1;
    const bend = side * (24 + 26 * k);
    const cx = (a.x + b.x) / 2 - uy * bend;
    const cy = (a.y + b.y) / 2 + ux * bend;
    const [sx, sy] = unit(cx - a.x, cy - a.y);
    const [ex, ey] = unit(b.x - cx, b.y - cy);
    const x0 = a.x + sx * a.r;
    const y0 = a.y + sy * a.r;
    const x1 = b.x - ex * (b.r + 4);
    const y1 = b.y - ey * (b.r + 4);
    out.push({ ...e, path: `M ${x0} ${y0} Q ${cx} ${cy} ${x1} ${y1}`, labelX: 0.25 * x0 + 0.5 * cx + 0.25 * x1, labelY: 0.25 * y0 + 0.5 * cy + 0.25 * y1, width, labelled, membership });
  }
  return out;
}

/** Reads the map. */
export async function readSchemaMap(hubs = 40): Promise<SchemaMap> {
  return await api().call('schema_map', { hubs });
}

/** Replaces the graph by the best-connected concepts and the links among them. */
export async function openHubs(hubs = 40) {
  const map = await readSchemaMap(hubs);
  const found = await fetchElements(map.hubs.map((h) => h.id));
  app.schemaMap = false;
  await showResultInGraph(found as unknown as Json, { replace: true });
}
