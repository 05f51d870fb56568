// Two renderers of the same graphology graph behind one interface: sigma.js
// (WebGL) when the platform has WebGL, and a plain canvas renderer when it
// does not (headless browsers without a GPU, locked-down webviews). Both
// support select, double-click to expand, drag to pin, pan, zoom and fit.
import Sigma from 'sigma';
import { createEdgeArrowProgram, EdgeLineProgram, EdgeRectangleProgram } from 'sigma/rendering';
import type { EdgeAttrs, KipGraph, NodeAttrs } from './model';
import { edgeLabelsByDefault, frameBox, labelPriority, labelRoom, placeLabels, showEdgeLabel, type EdgeLabelMode, type LabelCandidate, type PlacedLabel, type Rect } from './labels';

/** What the view tells the renderer beyond the graph itself. */
export interface Decorations {
  /** 1 for a node that just arrived, falling to 0 (drawn marked, never dimmed). */
  freshness(id: string): number;
  edgeLabelMode(predicate: string): EdgeLabelMode;
  /** Drawn ringed: on a found path, or changed since a chosen moment. */
  marked(id: string): boolean;
  /** Part of a multiple selection (shift-click, lasso): drawn as selected. */
  inSelection(id: string): boolean;
}

/** The parts of the view that floating panels cover, in CSS pixels. */
export interface Overlays {
  insets: { top: number; right: number; bottom: number; left: number };
  /** The panels' boxes relative to the container (labels avoid them). */
  rects: Rect[];
}

const NO_OVERLAYS: Overlays = { insets: { top: 0, right: 0, bottom: 0, left: 0 }, rects: [] };
const NO_DECORATIONS: Decorations = { freshness: () => 0, edgeLabelMode: () => 'auto', marked: () => false, inSelection: () => false };

export interface RendererEvents {
  clickNode(id: string): void;
  doubleClickNode(id: string): void;
  clickEdge(id: string): void;
  clickStage(): void;
  dragEnd(id: string): void;
  dragStart(id: string): void;
  /** The user panned or zoomed (the canvas renderer stops fitting by itself). */
  cameraMoved(): void;
}

export interface Theme {
  label: string;
  edgeLabel: string;
  accent: string;
  dim: string;
  background: string;
}

export interface GraphRenderer {
  readonly kind: 'webgl' | 'canvas';
  setSelected(id: string | null): void;
  setTheme(theme: Theme): void;
  /** Fits every visible node into the part of the view no panel covers. */
  fit(): void;
  /** Fits these nodes (and keeps them in the free part of the view). */
  frame(ids: string[]): void;
  /** Moves the camera, at its zoom, so the node sits in the free part's centre. */
  centreOn(id: string): void;
  setOverlays(o: Overlays): void;
  zoom(factor: number): void;
  focus(id: string): void;
  /** Where a node is drawn, in CSS pixels relative to the container. */
  nodeViewportPosition(id: string): { x: number; y: number } | null;
  refresh(): void;
  kill(): void;
}

/** Widths of labels drawn by sigma, measured once each. */
const measured = new Map<string, number>();
let measuring: CanvasRenderingContext2D | null = null;

/** The width of `label` in the label font at `px` pixels (sigma draws its own). */
function measureLabel(label: string, px: number): number {
  const key = `${px}:${label}`;
  let w = measured.get(key);
  if (w === undefined) {
    measuring ??= document.createElement('canvas').getContext('2d');
    if (!measuring) return label.length * px * 0.6;
    measuring.font = `500 ${px}px ${LABEL_FONT}`;
    w = measuring.measureText(label).width;
    if (measured.size > 20_000) measured.clear();
    measured.set(key, w);
  }
  return w;
}

/** The ring of marked nodes (a found path, recent changes). */
const PATH_RING = '#f08c00';

export const LABEL_FONT =
  '"Inter", "Segoe UI", "Noto Sans", "Noto Sans CJK SC", "PingFang SC", "Microsoft YaHei", "Noto Color Emoji", sans-serif';

/** The probe's answer: it creates a WebGL context, so it runs once. */
let probed: { ok: boolean; renderer: string } | null = null;

/**
 * Whether WebGL is there and drawn by a GPU. A software rasteriser
 * (SwiftShader in GPU-less Chromium, llvmpipe under Xvfb) draws sigma's
 * WebGL an order of magnitude slower than our canvas renderer draws the
 * same graph, so it counts as unavailable. WebKitGTK masks the string
 * ("Apple GPU"), so there software WebGL counts as a GPU; there it is also
 * faster than WebKit's canvas 2D (BENCHMARKS.md, "In the desktop window").
 */
export function webglAvailable(): { ok: boolean; renderer: string } {
  probed ??= probeWebgl();
  return probed;
}

function probeWebgl(): { ok: boolean; renderer: string } {
  try {
    const canvas = document.createElement('canvas');
    const gl = (canvas.getContext('webgl2') ?? canvas.getContext('webgl')) as WebGLRenderingContext | null;
    if (!gl) return { ok: false, renderer: 'none' };
    const info = gl.getExtension('WEBGL_debug_renderer_info');
    const renderer = String(info ? gl.getParameter(info.UNMASKED_RENDERER_WEBGL) : gl.getParameter(gl.RENDERER));
    gl.getExtension('WEBGL_lose_context')?.loseContext();
    return { ok: !/swiftshader|llvmpipe|softpipe|software/i.test(renderer), renderer };
  } catch {
    return { ok: false, renderer: 'none' };
  }
}

export function createRenderer(
  graph: KipGraph,
  container: HTMLElement,
  events: RendererEvents,
  theme: Theme,
  choice: 'auto' | 'webgl' | 'canvas' = 'auto',
  decor: Decorations = NO_DECORATIONS,
): GraphRenderer {
  if (choice === 'webgl' || (choice === 'auto' && webglAvailable().ok)) {
    try {
      return new SigmaRenderer(graph, container, events, theme, decor);
    } catch (e) {
      console.warn('WebGL renderer failed, falling back to canvas', e);
    }
  }
  return new CanvasRenderer(graph, container, events, theme, decor);
}

/**
 * Settings that depend on the graph's size: small graphs label every node
 * and link; large ones thin node labels out by zoom, drop link labels and
 * hide links while the camera moves, so frames stay cheap.
 */
function scaleSettings(graph: KipGraph) {
  const n = graph.order;
  return {
    labelRenderedSizeThreshold: n < 300 ? 0 : n < 3000 ? 6 : 9,
    labelDensity: n < 300 ? 5 : n < 3000 ? 0.7 : 0.25,
    renderEdgeLabels: graph.size < 1500,
    hideEdgesOnMove: graph.size > 8000,
    hideLabelsOnMove: n > 3000,
    // One-pixel GL lines instead of antialiased quads with arrowheads: at
    // this many links the arrowheads are specks, and a software rasteriser
    // (WebKitGTK without a GPU) spends most of a frame filling the quads.
    thinEdges: graph.size > 5000,
  };
}

/**
 * What the selection keeps in full colour: the node, its neighbours, and
 * every node that arrived after it was selected (added from the Primer, the
 * console or an expansion: what arrives is never drawn dimmed).
 */
function neighbourSet(graph: KipGraph, id: string | null, arrived: Set<string> = new Set()): Set<string> {
  const set = new Set<string>();
  if (id && graph.hasNode(id)) {
    set.add(id);
    graph.forEachNeighbor(id, (n) => set.add(n));
    for (const n of arrived) if (graph.hasNode(n)) set.add(n);
  }
  return set;
}

class SigmaRenderer implements GraphRenderer {
  readonly kind = 'webgl' as const;
  private sigma: Sigma<NodeAttrs, EdgeAttrs>;
  private selected: string | null = null;
  private near = new Set<string>();
  private theme: Theme;
  private dragging: string | null = null;
  private thinEdges: boolean;
  private hovered: string | null = null;
  private overlays: Overlays = NO_OVERLAYS;
  private denseEdges = false;
  private freshTimer = 0;
  /** Nodes added since the selection was made. */
  private arrived = new Set<string>();

  constructor(private graph: KipGraph, private container: HTMLElement, events: RendererEvents, theme: Theme, private decor: Decorations) {
    this.theme = theme;
    const { thinEdges, ...scaled } = scaleSettings(graph);
    this.thinEdges = thinEdges;
    this.sigma = new Sigma<NodeAttrs, EdgeAttrs>(graph, container, {
      enableEdgeEvents: true,
      defaultEdgeType: 'arrow',
      edgeProgramClasses: {
        arrow: createEdgeArrowProgram<NodeAttrs, EdgeAttrs>(),
        line: EdgeRectangleProgram<NodeAttrs, EdgeAttrs>,
        thin: EdgeLineProgram<NodeAttrs, EdgeAttrs>,
      },
      labelFont: LABEL_FONT,
      edgeLabelFont: LABEL_FONT,
      labelSize: 13,
      labelWeight: '500',
      edgeLabelSize: 11,
      labelColor: { color: theme.label },
      edgeLabelColor: { color: theme.edgeLabel },
      ...scaled,
      zIndex: true,
      stagePadding: 60,
      nodeReducer: (node, data) => {
        // A node that just arrived is marked and never dimmed.
        if (this.decor.freshness(node) > 0) return { ...data, highlighted: true, forceLabel: true, zIndex: 2 };
        if (this.decor.inSelection(node) || this.decor.marked(node)) return { ...data, highlighted: true, forceLabel: true, zIndex: 2 };
        if (node === this.hovered) return { ...data, forceLabel: true, zIndex: 2 };
        if (!this.selected) return data;
        if (node === this.selected) return { ...data, highlighted: true, forceLabel: true, zIndex: 2 };
        if (this.near.has(node)) return { ...data, forceLabel: true, zIndex: 1 };
        return { ...data, color: this.theme.dim, label: '', zIndex: 0 };
      },
      edgeReducer: (edge, data) => {
        let drawn = this.thinEdges ? { ...data, type: 'thin' } : data;
        const mode = this.decor.edgeLabelMode(data.predicate);
        if (!showEdgeLabel(mode, this.denseEdges)) drawn = { ...drawn, label: '' };
        else if (mode === 'on') drawn = { ...drawn, forceLabel: true };
        if (!this.selected) return drawn;
        const [s, t] = this.graph.extremities(edge);
        // The selected node's links keep their arrowheads.
        if (s === this.selected || t === this.selected)
          return { ...data, label: drawn.label, color: this.theme.accent, size: data.size + 0.8, forceLabel: mode !== 'off', zIndex: 1 };
        return { ...drawn, color: this.theme.dim, label: '' };
      },
    });
    // Label and edge-label density follow the graph's size (checked after
    // each change in node count, not per frame).
    let pending = false;
    const adapt = () => {
      if (pending) return;
      pending = true;
      requestAnimationFrame(() => {
        pending = false;
        const next = scaleSettings(graph);
        this.sigma.setSetting('labelRenderedSizeThreshold', next.labelRenderedSizeThreshold);
        this.sigma.setSetting('labelDensity', next.labelDensity);
        this.sigma.setSetting('renderEdgeLabels', next.renderEdgeLabels);
        this.sigma.setSetting('hideEdgesOnMove', next.hideEdgesOnMove);
        this.sigma.setSetting('hideLabelsOnMove', next.hideLabelsOnMove);
        // What arrived next to the selection is not dimmed.
        this.near = neighbourSet(this.graph, this.selected, this.arrived);
        const { width, height } = this.container.getBoundingClientRect();
        this.denseEdges = !edgeLabelsByDefault(this.graph.size, width, height);
        if (next.thinEdges !== this.thinEdges) this.thinEdges = next.thinEdges;
        this.sigma.refresh();
        this.expireFresh();
      });
    };
    const changes = ['nodeAdded', 'nodeDropped', 'edgeAdded', 'edgeDropped', 'cleared'] as const;
    for (const change of changes) graph.on(change, adapt);
    const arrive = ({ key }: { key: string }) => this.arrived.add(key);
    graph.on('nodeAdded', arrive);
    this.sigma.on('kill', () => {
      for (const change of changes) graph.removeListener(change, adapt);
      graph.removeListener('nodeAdded', arrive);
    });
    this.sigma.on('clickNode', ({ node }) => events.clickNode(node));
    this.sigma.on('doubleClickNode', (e) => {
      e.preventSigmaDefault();
      events.doubleClickNode(e.node);
    });
    this.sigma.on('clickEdge', ({ edge }) => events.clickEdge(edge));
    this.sigma.on('clickStage', () => events.clickStage());
    this.sigma.on('enterNode', ({ node }) => {
      this.hovered = node;
      this.sigma.refresh({ skipIndexation: true });
    });
    this.sigma.on('leaveNode', () => {
      this.hovered = null;
      this.sigma.refresh({ skipIndexation: true });
    });
    // Dragging a node moves and pins it.
    this.sigma.on('downNode', (e) => {
      this.dragging = e.node;
      events.dragStart(e.node);
    });
    const captor = this.sigma.getMouseCaptor();
    captor.on('mousemovebody', (e) => {
      if (!this.dragging) return;
      const p = this.sigma.viewportToGraph(e);
      this.graph.mergeNodeAttributes(this.dragging, { x: p.x, y: p.y, fixed: true });
      e.preventSigmaDefault();
      e.original.preventDefault();
      e.original.stopPropagation();
    });
    captor.on('mouseup', () => {
      if (this.dragging) events.dragEnd(this.dragging);
      this.dragging = null;
    });
  }

  setSelected(id: string | null) {
    this.selected = id && this.graph.hasNode(id) ? id : null;
    this.arrived.clear();
    this.near = neighbourSet(this.graph, this.selected);
    this.sigma.refresh({ skipIndexation: true });
  }
  setTheme(theme: Theme) {
    this.theme = theme;
    this.sigma.setSetting('labelColor', { color: theme.label });
    this.sigma.setSetting('edgeLabelColor', { color: theme.edgeLabel });
  }
  /** Redraws once the newest node is no longer new (its mark goes away). */
  private expireFresh() {
    clearTimeout(this.freshTimer);
    let any = false;
    this.graph.forEachNode((n) => {
      if (this.decor.freshness(n) > 0) any = true;
    });
    if (any) this.freshTimer = window.setTimeout(() => {
      this.sigma.refresh({ skipIndexation: true });
      this.expireFresh();
    }, 500);
  }
  setOverlays(o: Overlays) {
    this.overlays = o;
  }
  /**
   * The camera that shows framed-graph box `b` in the free part of the
   * view, with `b.right` pixels right of it for the rightmost label.
   */
  private cameraFor(b: { minX: number; maxX: number; minY: number; maxY: number; right: number }) {
    const { width, height } = this.container.getBoundingClientRect();
    const insets = { ...this.overlays.insets, right: this.overlays.insets.right + b.right };
    const freeW = Math.max(40, width - insets.left - insets.right - 80);
    const freeH = Math.max(40, height - insets.top - insets.bottom - 80);
    // The box's size on screen at ratio 1, measured with sigma's own
    // transform (stage padding, aspect and normalisation included): on
    // screen, sizes shrink as the ratio grows. An estimate from the
    // framed graph's unit square put the nodes under the toolbar and the
    // legend in the desktop window (the WebGL renderer's only user).
    const unit = { x: (b.minX + b.maxX) / 2, y: (b.minY + b.maxY) / 2, ratio: 1, angle: 0 };
    const p = this.sigma.framedGraphToViewport({ x: b.minX, y: b.minY }, { cameraState: unit });
    const q = this.sigma.framedGraphToViewport({ x: b.maxX, y: b.maxY }, { cameraState: unit });
    const ratio = Math.min(1.5, Math.max(0.05, Math.abs(q.x - p.x) / freeW, Math.abs(q.y - p.y) / freeH, 0.15));
    const state = { ...unit, ratio };
    // Shift so the box's centre lands in the centre of the free area.
    const centre = this.sigma.viewportToFramedGraph({ x: width / 2, y: height / 2 }, { cameraState: state });
    const target = this.sigma.viewportToFramedGraph(
      { x: insets.left + (width - insets.left - insets.right) / 2, y: insets.top + (height - insets.top - insets.bottom) / 2 },
      { cameraState: state },
    );
    return { ...state, x: state.x + centre.x - target.x, y: state.y + centre.y - target.y };
  }
  private framedBox(ids: string[]) {
    // Display data lags the graph until sigma indexes it again (positions
    // set at once, e.g. by a reopened scene, were framed where the nodes
    // had been): index now, so the box and the camera share one frame.
    this.sigma.refresh();
    let minX = Infinity, maxX = -Infinity, minY = Infinity, maxY = -Infinity;
    let right = 0;
    for (const id of ids) {
      const d = this.sigma.getNodeDisplayData(id);
      if (!d || d.hidden) continue;
      // The rightmost node's label needs room right of the box.
      const room = d.label ? labelRoom(measureLabel(d.label, 13), d.size) : 0;
      if (d.x > maxX) right = room;
      else if (d.x === maxX) right = Math.max(right, room);
      minX = Math.min(minX, d.x); maxX = Math.max(maxX, d.x);
      minY = Math.min(minY, d.y); maxY = Math.max(maxY, d.y);
    }
    return Number.isFinite(minX) ? { minX, maxX, minY, maxY, right } : null;
  }
  fit() {
    const b = this.framedBox(this.graph.nodes());
    if (b) void this.sigma.getCamera().animate(this.cameraFor(b), { duration: 300 });
  }
  frame(ids: string[]) {
    const b = this.framedBox(ids);
    if (b) void this.sigma.getCamera().animate(this.cameraFor(b), { duration: 300 });
  }
  centreOn(id: string) {
    const b = this.framedBox([id]);
    if (!b) return;
    const ratio = this.sigma.getCamera().ratio;
    const { width, height } = this.container.getBoundingClientRect();
    const { insets } = this.overlays;
    const state = { x: b.minX, y: b.minY, ratio, angle: 0 };
    const centre = this.sigma.viewportToFramedGraph({ x: width / 2, y: height / 2 }, { cameraState: state });
    const target = this.sigma.viewportToFramedGraph(
      { x: insets.left + (width - insets.left - insets.right) / 2, y: insets.top + (height - insets.top - insets.bottom) / 2 },
      { cameraState: state },
    );
    void this.sigma.getCamera().animate({ x: b.minX + centre.x - target.x, y: b.minY + centre.y - target.y, ratio }, { duration: 300 });
  }
  zoom(factor: number) {
    const camera = this.sigma.getCamera();
    void camera.animate({ ratio: camera.ratio / factor }, { duration: 200 });
  }
  focus(id: string) {
    if (!this.graph.hasNode(id)) return;
    const display = this.sigma.getNodeDisplayData(id);
    if (display) void this.sigma.getCamera().animate({ x: display.x, y: display.y, ratio: 0.6 }, { duration: 300 });
  }
  nodeViewportPosition(id: string) {
    if (!this.graph.hasNode(id)) return null;
    const a = this.graph.getNodeAttributes(id);
    return this.sigma.graphToViewport({ x: a.x, y: a.y });
  }
  refresh() {
    this.sigma.refresh();
  }
  kill() {
    this.sigma.kill();
  }
}

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
class CanvasRenderer implements GraphRenderer {
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

  private draw() {
    const { ctx, graph } = this;
    ctx.clearRect(0, 0, this.width, this.height);
    const sel = this.selected;
    const big = graph.order > 3000;
    // Edges. Large graphs stroke all plain edges in one path per style.
    ctx.lineCap = 'round';
    if (big) {
      const paths = new Map<string, Path2D>();
      graph.forEachEdge((_e, a, s, t, sa, ta) => {
        if (a.hidden || sa.hidden || ta.hidden) return;
        const touches = sel !== null && (s === sel || t === sel);
        const style = sel && !touches ? this.theme.dim : touches ? this.theme.accent : a.color;
        let path = paths.get(style);
        if (!path) paths.set(style, (path = new Path2D()));
        const p = this.toScreen(sa.x, sa.y);
        const q = this.toScreen(ta.x, ta.y);
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
      const p = this.toScreen(sa.x, sa.y);
      const q = this.toScreen(ta.x, ta.y);
      const touches = sel !== null && (s === sel || t === sel);
      ctx.strokeStyle = sel && !touches ? this.theme.dim : touches ? this.theme.accent : a.color;
      ctx.globalAlpha = a.anchor ? 0.6 : 0.85;
      ctx.lineWidth = touches ? a.size + 1 : a.size;
      ctx.beginPath();
      ctx.moveTo(p.x, p.y);
      ctx.lineTo(q.x, q.y);
      ctx.stroke();
      if (a.type === 'arrow' && !big) {
        const r = this.nodeRadius(ta);
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
      void e;
    });
    ctx.globalAlpha = 1;
    // Edge labels: per predicate on or off, else only while the links on
    // screen are sparse enough to read them (and zoomed in enough).
    let onScreen = 0;
    graph.forEachEdge((_, a, _s, _t, sa, ta) => {
      if (a.hidden || a.anchor || sa.hidden || ta.hidden) return;
      const p = this.toScreen(sa.x, sa.y);
      const q = this.toScreen(ta.x, ta.y);
      if (Math.max(p.x, q.x) >= 0 && Math.min(p.x, q.x) <= this.width && Math.max(p.y, q.y) >= 0 && Math.min(p.y, q.y) <= this.height) onScreen++;
    });
    const dense = !edgeLabelsByDefault(onScreen, this.width, this.height) || this.camera.scale < this.base * 0.7;
    this.lastEdgeLabels = 0;
    if (graph.size < 2000) {
      ctx.font = `11px ${LABEL_FONT}`;
      ctx.textAlign = 'center';
      ctx.textBaseline = 'middle';
      graph.forEachEdge((_, a, s, t, sa, ta) => {
        if (a.hidden || !a.label || sa.hidden || ta.hidden) return;
        if (!showEdgeLabel(this.decor.edgeLabelMode(a.predicate), dense)) return;
        if (sel && s !== sel && t !== sel) return;
        const p = this.toScreen(sa.x, sa.y);
        const q = this.toScreen(ta.x, ta.y);
        const len = Math.hypot(q.x - p.x, q.y - p.y);
        if (len < ctx.measureText(a.label).width + 24) return;
        let ang = Math.atan2(q.y - p.y, q.x - p.x);
        if (ang > Math.PI / 2 || ang < -Math.PI / 2) ang += Math.PI;
        ctx.save();
        ctx.translate((p.x + q.x) / 2, (p.y + q.y) / 2);
        ctx.rotate(ang);
        ctx.fillStyle = this.theme.edgeLabel;
        ctx.fillText(a.label, 0, -6);
        ctx.restore();
        this.lastEdgeLabels++;
      });
    }
    // Nodes.
    const order: [string, NodeAttrs][] = [];
    graph.forEachNode((n, a) => {
      if (!a.hidden) order.push([n, a]);
    });
    let freshLeft = false;
    for (const [n, a] of order) {
      const p = this.toScreen(a.x, a.y);
      if (p.x < -20 || p.y < -20 || p.x > this.width + 20 || p.y > this.height + 20) continue;
      const r = this.nodeRadius(a);
      const fresh = this.freshness(n);
      if (fresh > 0) {
        // Just arrived: a fading halo, and never dimmed.
        freshLeft = true;
        ctx.strokeStyle = this.theme.accent;
        ctx.globalAlpha = 0.25 + 0.6 * fresh;
        ctx.lineWidth = 3;
        ctx.beginPath();
        ctx.arc(p.x, p.y, r + 5 + 3 * (1 - fresh), 0, Math.PI * 2);
        ctx.stroke();
        ctx.globalAlpha = 1;
      }
      const dimmed = sel !== null && !this.near.has(n) && fresh === 0 && !this.decor.marked(n) && !this.decor.inSelection(n);
      ctx.fillStyle = dimmed ? this.theme.dim : a.color;
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
        ctx.strokeStyle = this.theme.accent;
        ctx.lineWidth = 3;
        ctx.stroke();
      }
      if (this.decor.inSelection(n)) {
        // Apart from the fill, so it shows on nodes of the accent's hue too.
        ctx.strokeStyle = this.theme.accent;
        ctx.lineWidth = 2.5;
        ctx.setLineDash([4, 3]);
        ctx.beginPath();
        ctx.arc(p.x, p.y, r + 3.5, 0, Math.PI * 2);
        ctx.stroke();
        ctx.setLineDash([]);
      }
      if (this.decor.marked(n)) {
        ctx.strokeStyle = PATH_RING;
        ctx.lineWidth = 2.5;
        ctx.beginPath();
        ctx.arc(p.x, p.y, r + 4, 0, Math.PI * 2);
        ctx.stroke();
      }
      if (a.fixed) {
        ctx.fillStyle = this.theme.background;
        ctx.beginPath();
        ctx.arc(p.x, p.y, Math.max(1.5, r * 0.3), 0, Math.PI * 2);
        ctx.fill();
      }
    }
    // Node labels: placed by priority (selected, hovered, new, then by
    // degree) where they overlap no other label and no floating panel.
    ctx.font = `500 13px ${LABEL_FONT}`;
    ctx.textAlign = 'left';
    ctx.textBaseline = 'middle';
    const showSmall = this.camera.scale >= this.base * 0.5 || graph.order < 300;
    const candidates: LabelCandidate[] = [];
    for (const [n, a] of this.bySize()) {
      if (a.hidden || !a.label) continue;
      const fresh = this.freshness(n) > 0;
      if (sel && !this.near.has(n) && !fresh && !this.decor.marked(n) && !this.decor.inSelection(n)) continue;
      if (!showSmall && a.size <= 9 && n !== sel && n !== this.hovered && !fresh) continue;
      const p = this.toScreen(a.x, a.y);
      if (p.x < 0 || p.y < 0 || p.x > this.width || p.y > this.height) continue;
      if (candidates.length > 1500) break;
      candidates.push({
        id: n,
        x: p.x,
        y: p.y,
        r: this.nodeRadius(a),
        width: this.labelWidth(a.label),
        height: 16,
        priority: labelPriority({ selected: n === sel, hovered: n === this.hovered, fresh, degree: graph.degree(n), size: a.size }),
        force: n === sel || n === this.hovered,
      });
    }
    const discs = candidates.map((c) => ({ x: c.x - c.r, y: c.y - c.r, w: c.r * 2, h: c.r * 2 }));
    const placed = placeLabels(candidates, { width: this.width, height: this.height }, this.overlays.rects, 300, discs);
    for (const l of placed) {
      const a = graph.getNodeAttributes(l.id);
      ctx.fillStyle = this.theme.background;
      ctx.globalAlpha = 0.7;
      ctx.fillRect(l.box.x - 1, l.box.y + 1, l.box.w + 2, l.box.h - 2);
      ctx.globalAlpha = 1;
      ctx.fillStyle = this.theme.label;
      ctx.fillText(a.label, l.box.x, l.box.y + l.box.h / 2);
    }
    this.lastLabels = placed;
    if (freshLeft) this.schedule();
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
