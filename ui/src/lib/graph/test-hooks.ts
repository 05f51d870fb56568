// A read-only window onto what the graph view draws (`window.kipExplorer`),
// for the end-to-end tests (they click real canvas pixels) and for
// measuring paint times. Nothing in the app reads it.
import { graphModel } from '../state.svelte';
import { webglAvailable, type GraphRenderer } from './renderer';
import { graphPicture } from './export-image';
import { workspace } from './workspace.svelte';

/** What the hooks read from the view, when they are called. */
export interface ViewProbe {
  container(): HTMLElement | undefined;
  toolbar(): HTMLElement | undefined;
  legend(): HTMLElement | undefined;
  layoutRunning(): boolean;
  /** The multiple selection. */
  selection(): string[];
}

/** Notes that the first graph is painted (a restored workspace's, as `seedGraph` notes the seeded one's). */
export function markPainted() {
  const w = window as unknown as { kipExplorer?: Record<string, unknown> };
  requestAnimationFrame(() => requestAnimationFrame(() => (w.kipExplorer = { ...(w.kipExplorer ?? {}), firstGraphPaintMs: Math.round(performance.now()) })));
}

export function exposeForTests(r: GraphRenderer, view: ViewProbe) {
  const w = window as unknown as { kipExplorer?: Record<string, unknown> };
  w.kipExplorer = {
    ...(w.kipExplorer ?? {}),
    renderer: r.kind,
    webglRenderer: webglAvailable().renderer,
    graphNodes: () =>
      graphModel.graph.mapNodes((id, a) => ({ id, label: a.label, type: a.kipType, hidden: !!a.hidden, pinned: !!a.fixed, x: a.x, y: a.y, color: a.color })),
    graphEdges: () => graphModel.graph.mapEdges((id, a, s, t) => ({ id, predicate: a.predicate, source: s, target: t, anchor: !!a.anchor })),
    nodePosition: (id: string) => r.nodeViewportPosition(id),
    freshNodes: () => graphModel.graph.filterNodes((id) => graphModel.freshness(id) > 0),
    // What the canvas renderer drew last: placed node labels and the number of edge labels.
    drawnLabels: () => ('lastLabels' in r ? (r as unknown as { lastLabels: { id: string; box: { x: number; y: number; w: number; h: number } }[] }).lastLabels : null),
    drawnEdgeLabels: () => ('lastEdgeLabels' in r ? (r as unknown as { lastEdgeLabels: number }).lastEdgeLabels : null),
    overlays: () => {
      const c = view.container()?.getBoundingClientRect();
      const box = (el: HTMLElement | undefined) => {
        const b = el?.getBoundingClientRect();
        return b && c ? { x: b.left - c.left, y: b.top - c.top, w: b.width, h: b.height } : null;
      };
      return { toolbar: box(view.toolbar()), legend: box(view.legend()) };
    },
    layoutRunning: () => view.layoutRunning(),
    selection: () => [...view.selection()],
    markedNodes: () => [...graphModel.marked],
    pathLinks: () => [...graphModel.pathLinks],
    nodeStyle: (id: string) => {
      if (!graphModel.graph.hasNode(id)) return null;
      const a = graphModel.graph.getNodeAttributes(id);
      return { color: a.color, size: a.size, label: a.label };
    },
    edgeStyle: (id: string) => {
      if (!graphModel.graph.hasEdge(id)) return null;
      const a = graphModel.graph.getEdgeAttributes(id);
      return { color: a.color, size: a.size, label: a.label };
    },
    svg: () => graphPicture()?.svg ?? null,
    filteredOut: () => [...graphModel.filteredOut],
    filterHides: () => graphModel.filterHides,
    workspace: () => ({ layout: workspace.layout, filter: workspace.filter, sceneName: workspace.sceneName }),
  };
}
