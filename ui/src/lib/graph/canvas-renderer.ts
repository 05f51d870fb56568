// The canvas fallback renderer: its camera, its input (select, drag to
// pin, pan, zoom, double-click) and its frames, coalesced into one per
// animation frame. What a frame draws, step by step, is canvas-draw.ts's.
import type { KipGraph, NodeAttrs } from './model';
import { frameBox, labelRoom, type PlacedLabel } from './labels';
import { NO_OVERLAYS, neighbourSet, type Decorations, type GraphRenderer, type Overlays, type RendererEvents, type Theme } from './render-shared';
import { drawEdgeLabels, drawEdges, drawNodeLabels, drawNodes, type Frame } from './canvas-draw';

interface Camera {
  x: number;
  y: number;
  scale: number;
}

/**
 * The canvas fallback: draws edges, arrowheads, nodes and labels with the
 * 2D context. Labels are culled by zoom and by overlap so large graphs stay
 * readable and cheap; redraws are coalesced into one per animation frame.
 */
export class CanvasRenderer implements GraphRenderer {
  readonly kind = 'canvas' as const;
  private canvas: HTMLCanvasElement;
  private ctx: CanvasRenderingContext2D;
  private camera: Camera = { x: 0, y: 0, scale: 1 };
  private rafId = 0;
  private selected: string | null = null;
  private near = new Set<string>();
  private theme: Theme;
  private width = 0;
  private height = 0;
  private fitted = false;
  private cleanup: (() => void)[] = [];
  private hovered: string | null = null;
  private overlays: Overlays = NO_OVERLAYS;
  /** The neighbours of the selection need recomputing (the graph changed). */
  private nearStale = false;
  /** Nodes added since the selection was made. */
  private arrived = new Set<string>();
  private labelWidths = new Map<string, number>();
  /** What the last frame drew, for the tests: node labels and edge labels. */
  lastLabels: PlacedLabel[] = [];
  lastEdgeLabels = 0;

  constructor(private graph: KipGraph, private container: HTMLElement, private events: RendererEvents, theme: Theme, private decor: Decorations) {
    this.theme = theme;
    this.canvas = document.createElement('canvas');
    this.canvas.className = 'graph-canvas';
    this.canvas.style.cssText = 'position:absolute;inset:0;width:100%;height:100%;touch-action:none';
    container.appendChild(this.canvas);
    const ctx = this.canvas.getContext('2d');
    if (!ctx) throw new Error('no 2D canvas context');
    this.ctx = ctx;
    const schedule = () => {
      this.nearStale = true;
      this.schedule();
    };
    for (const ev of [
      'nodeAdded', 'edgeAdded', 'nodeDropped', 'edgeDropped', 'cleared',
      'nodeAttributesUpdated', 'edgeAttributesUpdated', 'eachNodeAttributesUpdated',
    ] as const) {
      graph.on(ev, schedule);
      this.cleanup.push(() => graph.removeListener(ev, schedule));
    }
    // Nodes replaced one for one leave the counts `bySize` is keyed by as
    // they were (time travel swaps what was added since for what was
    // removed since): any node arriving or leaving drops the order.
    const reorder = () => (this.sortedCache = null);
    for (const ev of ['nodeAdded', 'nodeDropped', 'cleared'] as const) {
      graph.on(ev, reorder);
      this.cleanup.push(() => graph.removeListener(ev, reorder));
    }
    const arrive = ({ key }: { key: string }) => this.arrived.add(key);
    graph.on('nodeAdded', arrive);
    this.cleanup.push(() => graph.removeListener('nodeAdded', arrive));
    const ro = new ResizeObserver(() => this.resize());
    ro.observe(container);
    this.cleanup.push(() => ro.disconnect());
    this.bindInput();
    this.resize();
  }

  private resize() {
    const r = this.container.getBoundingClientRect();
    const dpr = window.devicePixelRatio || 1;
    this.width = r.width;
    this.height = r.height;
    this.canvas.width = Math.max(1, Math.round(r.width * dpr));
    this.canvas.height = Math.max(1, Math.round(r.height * dpr));
    this.ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    this.schedule();
  }

  private schedule() {
    if (this.rafId) return;
    this.rafId = requestAnimationFrame(() => {
      this.rafId = 0;
      if (!this.fitted && this.graph.order > 0) {
        this.fitted = true;
        this.fitNow();
      }
      if (this.nearStale) {
        // Nodes that arrived next to the selection join its highlight.
        this.nearStale = false;
        this.near = neighbourSet(this.graph, this.selected, this.arrived);
      }
      this.draw();
    });
  }

  private toScreen(x: number, y: number) {
    // Graph y grows upwards (as in sigma); the screen's grows downwards.
    return {
      x: (x - this.camera.x) * this.camera.scale + this.width / 2,
      y: -(y - this.camera.y) * this.camera.scale + this.height / 2,
    };
  }
  private toGraph(sx: number, sy: number) {
    return {
      x: (sx - this.width / 2) / this.camera.scale + this.camera.x,
      y: -(sy - this.height / 2) / this.camera.scale + this.camera.y,
    };
  }

  private nodeRadius(a: NodeAttrs) {
    return a.size * Math.max(0.6, Math.min(1.6, Math.sqrt(this.camera.scale / this.baseScale())));
  }
  private baseScale() {
    return this.base || 1;
  }
  private base = 1;

  /** The box of the shown nodes among `ids`, and its rightmost node. */
  private box(ids: Iterable<string>) {
    let minX = Infinity, maxX = -Infinity, minY = Infinity, maxY = -Infinity;
    let rightmost = '';
    for (const id of ids) {
      if (!this.graph.hasNode(id)) continue;
      const a = this.graph.getNodeAttributes(id);
      if (a.hidden) continue;
      if (a.x > maxX) rightmost = id;
      minX = Math.min(minX, a.x); maxX = Math.max(maxX, a.x);
      minY = Math.min(minY, a.y); maxY = Math.max(maxY, a.y);
    }
    return Number.isFinite(minX) ? { minX, maxX, minY, maxY, rightmost } : null;
  }

  private fitNow(ids?: string[]) {
    const b = this.box(ids ?? this.graph.nodes());
    if (!b) return;
    // A lone node (or a line of them) is centred at a comfortable scale, in
    // the part of the view that the toolbar and the legend leave free, with
    // room for the rightmost node's label.
    const a = this.graph.getNodeAttributes(b.rightmost);
    const right = labelRoom(this.labelWidth(a.label), a.size);
    const cam = frameBox(b, { width: this.width, height: this.height }, this.overlays.insets, 50, 60, right);
    // Framing a few new nodes never zooms in further than fitting all did.
    if (ids && this.base) cam.scale = Math.min(cam.scale, Math.max(this.base, this.camera.scale));
    const insets = { ...this.overlays.insets, right: this.overlays.insets.right + right };
    this.camera = ids ? frameBoxAt(b, cam.scale, insets) : cam;
    if (!ids) this.base = this.camera.scale;
  }

  /** One frame: links, their labels, nodes, then the node labels that fit. */
  private draw() {
    const f = this.frameState();
    this.ctx.clearRect(0, 0, this.width, this.height);
    drawEdges(f);
    this.lastEdgeLabels = drawEdgeLabels(f);
    const freshLeft = drawNodes(f);
    this.lastLabels = drawNodeLabels(f);
    if (freshLeft) this.schedule();
  }

  /** What the drawing steps read: the graph, the camera, the selection, the look. */
  private frameState(): Frame {
    return {
      ctx: this.ctx,
      graph: this.graph,
      width: this.width,
      height: this.height,
      theme: this.theme,
      decor: this.decor,
      sel: this.selected,
      near: this.near,
      hovered: this.hovered,
      scale: this.camera.scale,
      base: this.base,
      rects: this.overlays.rects,
      toScreen: (x, y) => this.toScreen(x, y),
      radius: (a) => this.nodeRadius(a),
      freshness: (id) => this.freshness(id),
      labelWidth: (label) => this.labelWidth(label),
      bySize: () => this.bySize(),
    };
  }

  private freshness(id: string): number {
    return Math.max(0, Math.min(1, this.decor.freshness(id)));
  }

  private labelWidth(label: string): number {
    let w = this.labelWidths.get(label);
    if (w === undefined) {
      w = this.ctx.measureText(label).width;
      if (this.labelWidths.size > 20_000) this.labelWidths.clear();
      this.labelWidths.set(label, w);
    }
    return w;
  }

  /** Nodes by size, largest first; recomputed when the graph's shape changes. */
  private sortedCache: [string, NodeAttrs][] | null = null;
  private sortedVersion = -1;
  private bySize(): [string, NodeAttrs][] {
    const version = this.graph.order * 1_000_003 + this.graph.size;
    if (!this.sortedCache || this.sortedVersion !== version) {
      this.sortedCache = this.graph.mapNodes((n, a) => [n, a] as [string, NodeAttrs]).sort((x, y) => y[1].size - x[1].size);
      this.sortedVersion = version;
    }
    return this.sortedCache;
  }

  private hitNode(sx: number, sy: number): string | null {
    let best: string | null = null;
    let bestD = Infinity;
    this.graph.forEachNode((n, a) => {
      if (a.hidden) return;
      const p = this.toScreen(a.x, a.y);
      const d = Math.hypot(p.x - sx, p.y - sy);
      if (d <= Math.max(8, this.nodeRadius(a) + 3) && d < bestD) {
        best = n;
        bestD = d;
      }
    });
    return best;
  }

  private hitEdge(sx: number, sy: number): string | null {
    let best: string | null = null;
    let bestD = 5;
    this.graph.forEachEdge((e, a, _s, _t, sa, ta) => {
      if (a.hidden || a.anchor || sa.hidden || ta.hidden) return;
      const p = this.toScreen(sa.x, sa.y);
      const q = this.toScreen(ta.x, ta.y);
      const len2 = (q.x - p.x) ** 2 + (q.y - p.y) ** 2;
      if (!len2) return;
      const t = Math.max(0, Math.min(1, ((sx - p.x) * (q.x - p.x) + (sy - p.y) * (q.y - p.y)) / len2));
      const d = Math.hypot(sx - (p.x + t * (q.x - p.x)), sy - (p.y + t * (q.y - p.y)));
      if (d < bestD) {
        best = e;
        bestD = d;
      }
    });
    return best;
  }

  private bindInput() {
    const c = this.canvas;
    let down: { x: number; y: number; node: string | null; cam: Camera; moved: boolean } | null = null;
    const local = (e: MouseEvent) => {
      const r = c.getBoundingClientRect();
      return { x: e.clientX - r.left, y: e.clientY - r.top };
    };
    const onDown = (e: PointerEvent) => {
      // The right button opens the view's context menu: it neither drags nor selects here.
      if (e.button !== 0) return;
      const p = local(e);
      const node = this.hitNode(p.x, p.y);
      down = { ...p, node, cam: { ...this.camera }, moved: false };
      c.setPointerCapture(e.pointerId);
      if (node) this.events.dragStart(node);
    };
    const onMove = (e: PointerEvent) => {
      const p = local(e);
      if (!down) {
        const over = this.hitNode(p.x, p.y);
        c.style.cursor = over ? 'pointer' : 'grab';
        if (over !== this.hovered) {
          this.hovered = over;
          this.schedule();
        }
        return;
      }
      if (Math.hypot(p.x - down.x, p.y - down.y) > 3) down.moved = true;
      if (!down.moved) return;
      if (down.node) {
        const g = this.toGraph(p.x, p.y);
        this.graph.mergeNodeAttributes(down.node, { x: g.x, y: g.y, fixed: true });
      } else {
        this.camera.x = down.cam.x - (p.x - down.x) / this.camera.scale;
        this.camera.y = down.cam.y + (p.y - down.y) / this.camera.scale;
        c.style.cursor = 'grabbing';
        this.events.cameraMoved();
        this.schedule();
      }
    };
    const onUp = (e: PointerEvent) => {
      if (!down) return;
      const p = local(e);
      if (down.node && down.moved) this.events.dragEnd(down.node);
      else if (!down.moved) {
        if (down.node) this.events.clickNode(down.node);
        else {
          const edge = this.hitEdge(p.x, p.y);
          if (edge) this.events.clickEdge(edge);
          else this.events.clickStage();
        }
      }
      down = null;
    };
    const onDbl = (e: MouseEvent) => {
      const p = local(e);
      const node = this.hitNode(p.x, p.y);
      if (node) this.events.doubleClickNode(node);
      else this.zoomAt(p.x, p.y, 1.6);
    };
    const onWheel = (e: WheelEvent) => {
      e.preventDefault();
      const p = local(e);
      this.zoomAt(p.x, p.y, Math.exp(-e.deltaY * 0.0015));
      this.events.cameraMoved();
    };
    c.addEventListener('pointerdown', onDown);
    c.addEventListener('pointermove', onMove);
    c.addEventListener('pointerup', onUp);
    c.addEventListener('dblclick', onDbl);
    c.addEventListener('wheel', onWheel, { passive: false });
    this.cleanup.push(() => {
      c.removeEventListener('pointerdown', onDown);
      c.removeEventListener('pointermove', onMove);
      c.removeEventListener('pointerup', onUp);
      c.removeEventListener('dblclick', onDbl);
      c.removeEventListener('wheel', onWheel);
    });
  }

  private zoomAt(sx: number, sy: number, factor: number) {
    const before = this.toGraph(sx, sy);
    this.camera.scale = Math.max(this.base * 0.05, Math.min(this.base * 40, this.camera.scale * factor));
    const after = this.toGraph(sx, sy);
    this.camera.x += before.x - after.x;
    this.camera.y += before.y - after.y;
    this.schedule();
  }

  setSelected(id: string | null) {
    this.selected = id && this.graph.hasNode(id) ? id : null;
    this.arrived.clear();
    this.near = neighbourSet(this.graph, this.selected);
    this.schedule();
  }
  setTheme(theme: Theme) {
    this.theme = theme;
    this.schedule();
  }
  fit() {
    this.fitNow();
    this.schedule();
  }
  frame(ids: string[]) {
    this.fitNow(ids);
    this.schedule();
  }
  centreOn(id: string) {
    const b = this.box([id]);
    if (!b) return;
    this.camera = frameBoxAt(b, this.camera.scale, this.overlays.insets);
    this.schedule();
  }
  setOverlays(o: Overlays) {
    this.overlays = o;
    this.schedule();
  }
  zoom(factor: number) {
    this.zoomAt(this.width / 2, this.height / 2, factor);
  }
  focus(id: string) {
    if (!this.graph.hasNode(id)) return;
    const a = this.graph.getNodeAttributes(id);
    this.camera.x = a.x;
    this.camera.y = a.y;
    this.schedule();
  }
  nodeViewportPosition(id: string) {
    if (!this.graph.hasNode(id)) return null;
    const a = this.graph.getNodeAttributes(id);
    return this.toScreen(a.x, a.y);
  }
  refresh() {
    this.schedule();
  }
  kill() {
    cancelAnimationFrame(this.rafId);
    for (const f of this.cleanup) f();
    this.canvas.remove();
  }
}

/** The camera at `scale` that puts box `b`'s centre in the centre of the free area. */
function frameBoxAt(
  b: { minX: number; maxX: number; minY: number; maxY: number },
  scale: number,
  insets: Overlays['insets'],
): Camera {
  const dx = (insets.left - insets.right) / 2;
  const dy = (insets.top - insets.bottom) / 2;
  return { x: (b.minX + b.maxX) / 2 - dx / scale, y: (b.minY + b.maxY) / 2 + dy / scale, scale };
}
