// The WebGL renderer: sigma.js draws the graph, with reducers for the
// selection, the marks and the per-predicate link labels, and its camera
// framed so the nodes keep clear of the floating panels.
import Sigma from 'sigma';
import { createEdgeArrowProgram, EdgeLineProgram, EdgeRectangleProgram } from 'sigma/rendering';
import type { EdgeAttrs, KipGraph, NodeAttrs } from './model';
import { edgeLabelsByDefault, labelRoom, showEdgeLabel } from './labels';
import { LABEL_FONT, neighbourSet, NO_OVERLAYS, type Decorations, type GraphRenderer, type Overlays, type RendererEvents, type Theme } from './render-shared';

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

export class SigmaRenderer implements GraphRenderer {
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
        if (this.decor.dimmed(node) && node !== this.selected) return { ...data, color: this.theme.dim, label: '', zIndex: 0 };
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
        if (this.decor.dimmed(edge)) return { ...drawn, color: this.theme.dim, label: '' };
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
    this.followSize();
    this.bindEvents(events);
  }

  /**
   * Label and edge-label density follow the graph's size (checked after
   * each change in node count, not per frame); nodes that arrive are noted
   * (what arrives next to the selection is not dimmed).
   */
  private followSize() {
    const graph = this.graph;
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
  }

  /** Clicks, hovering and dragging (which moves and pins a node), passed on to the view. */
  private bindEvents(events: RendererEvents) {
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
