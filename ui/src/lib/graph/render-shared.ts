// What both renderers share: the interface the graph view drives
// (GraphRenderer, its events, theme, decorations and overlays), the label
// font, the ring colour of marked nodes, and which nodes the selection keeps
// in full colour.
import type { KipGraph } from './model';
import type { EdgeLabelMode, Rect } from './labels';

/** What the view tells the renderer beyond the graph itself. */
export interface Decorations {
  /** 1 for a node that just arrived, falling to 0 (drawn marked, never dimmed). */
  freshness(id: string): number;
  edgeLabelMode(predicate: string): EdgeLabelMode;
  /** Drawn ringed: on a found path, or changed since a chosen moment. */
  marked(id: string): boolean;
  /** Part of a multiple selection (shift-click, lasso): drawn as selected. */
  inSelection(id: string): boolean;
  /** Left out by the property filter (in its "dim" mode): drawn faded, without a label. */
  dimmed(id: string): boolean;
}

/** The parts of the view that floating panels cover, in CSS pixels. */
export interface Overlays {
  insets: { top: number; right: number; bottom: number; left: number };
  /** The panels' boxes relative to the container (labels avoid them). */
  rects: Rect[];
}

export const NO_OVERLAYS: Overlays = { insets: { top: 0, right: 0, bottom: 0, left: 0 }, rects: [] };
export const NO_DECORATIONS: Decorations = { freshness: () => 0, edgeLabelMode: () => 'auto', marked: () => false, inSelection: () => false, dimmed: () => false };

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

/** The ring of marked nodes (a found path, recent changes). */
export const PATH_RING = '#f08c00';

export const LABEL_FONT =
  '"Inter", "Segoe UI", "Noto Sans", "Noto Sans CJK SC", "PingFang SC", "Microsoft YaHei", "Noto Color Emoji", sans-serif';

/**
 * What the selection keeps in full colour: the node, its neighbours, and
 * every node that arrived after it was selected (added from the Primer, the
 * console or an expansion: what arrives is never drawn dimmed).
 */
export function neighbourSet(graph: KipGraph, id: string | null, arrived: Set<string> = new Set()): Set<string> {
  const set = new Set<string>();
  if (id && graph.hasNode(id)) {
    set.add(id);
    graph.forEachNeighbor(id, (n) => set.add(n));
    for (const n of arrived) if (graph.hasNode(n)) set.add(n);
  }
  return set;
}
