// The graph's workspace: what the curator set up beyond the graph itself —
// the layout chosen, the property filter, the scene's name — and the whole
// scene (elements, places, pins, hidden ones, type and predicate filters,
// link-label modes, layout, filter) kept in this browser per nexus, so a
// reload comes back to it (Bloom keeps its perspective the same way).
// Styling rules are the nexus's (ui.styles) and come back by themselves.
import { app, graphModel } from '../state.svelte';
import type { Scene } from '../export';
import type { EdgeLabelMode } from './labels';
import { isLayoutKind, type LayoutKind } from './layouts';
import { passes, readFilter, ready, type PropertyFilter } from './property-filter';
import { sceneOf } from './scenes';

export const workspace = $state({
  layout: 'force' as LayoutKind,
  filter: null as PropertyFilter | null,
  /** The scene last opened or saved ('' for none): names exports. */
  sceneName: '',
});

/** What a reload brings back. */
export interface KeptWorkspace {
  scene: Scene;
  hiddenTypes: string[];
  hiddenPredicates: string[];
  edgeLabels: [string, EdgeLabelMode][];
  layout: LayoutKind;
  filter: PropertyFilter | null;
  sceneName: string;
}

const key = () => `kip-explorer.workspace.${app.nexusPath || 'default'}`;

/** Puts the property filter on the graph: what does not pass is dimmed or hidden. */
export function applyPropertyFilter() {
  const f = workspace.filter;
  const out = new Set<string>();
  if (ready(f)) {
    const now = Date.now();
    for (const [id, e] of graphModel.elements) {
      if (!graphModel.graph.hasNode(id) && !graphModel.graph.hasEdge(id)) continue;
      if (!passes(f, e, now)) out.add(id);
    }
  }
  graphModel.setFilteredOut(out, ready(f) && f.mode === 'hide');
}

/**
 * Whether the filter's "dim" mode draws this node or link faded: left out
 * itself, or (a link) both its ends are.
 */
export function isDimmed(id: string): boolean {
  if (graphModel.filterHides || !graphModel.filteredOut.size) return false;
  if (graphModel.filteredOut.has(id)) return true;
  const g = graphModel.graph;
  if (!g.hasEdge(id)) return false;
  const [s, t] = g.extremities(id);
  return graphModel.filteredOut.has(s) && graphModel.filteredOut.has(t);
}

/** How many of the filter's elements it leaves out, of how many it looks at. */
export function filterCounts(): { out: number; total: number } {
  const f = workspace.filter;
  let total = 0;
  for (const id of graphModel.elements.keys()) {
    const node = graphModel.graph.hasNode(id) && graphModel.graph.getNodeAttribute(id, 'kind') === 'concept';
    const link = graphModel.graph.hasEdge(id);
    if ((node && f?.scope !== 'links') || (link && f?.scope !== 'nodes')) total++;
  }
  return { out: graphModel.filteredOut.size, total };
}

/** Keeps the workspace in this browser (called on changes, debounced, and when the page goes). */
export function keepWorkspace() {
  if (!app.nexusPath && !app.ready) return;
  const kept: KeptWorkspace = {
    scene: sceneOf(workspace.sceneName || 'workspace'),
    hiddenTypes: [...graphModel.hiddenTypes],
    hiddenPredicates: [...graphModel.hiddenPredicates],
    edgeLabels: [...graphModel.edgeLabelModes],
    layout: workspace.layout,
    filter: workspace.filter,
    sceneName: workspace.sceneName,
  };
  try {
    localStorage.setItem(key(), JSON.stringify({ ...kept, scene: { ...kept.scene, styles: [] } }));
  } catch {
    // Storage full or refused: the workspace is not kept, the view works on.
  }
}

let timer: ReturnType<typeof setTimeout> | undefined;
/** Keeps the workspace a moment after the last change. */
export function keepSoon() {
  clearTimeout(timer);
  timer = setTimeout(keepWorkspace, 500);
}

/** The workspace kept for this nexus, if there is one with nodes. */
export function readWorkspace(): KeptWorkspace | null {
  try {
    const raw = localStorage.getItem(key());
    if (!raw) return null;
    const v = JSON.parse(raw) as Partial<KeptWorkspace>;
    if (!v.scene || !Array.isArray(v.scene.nodes) || !v.scene.nodes.length || !Array.isArray(v.scene.links)) return null;
    const strings = (x: unknown) => (Array.isArray(x) ? x.filter((s): s is string => typeof s === 'string') : []);
    return {
      scene: v.scene,
      hiddenTypes: strings(v.hiddenTypes),
      hiddenPredicates: strings(v.hiddenPredicates),
      edgeLabels: Array.isArray(v.edgeLabels) ? v.edgeLabels.filter((p) => Array.isArray(p) && typeof p[0] === 'string' && (p[1] === 'on' || p[1] === 'off')) : [],
      layout: isLayoutKind(v.layout) ? v.layout : 'force',
      filter: readFilter(v.filter),
      sceneName: typeof v.sceneName === 'string' ? v.sceneName : '',
    };
  } catch {
    return null;
  }
}

/** Puts a kept workspace's settings back (its scene is opened by the view). */
export function restoreSettings(kept: KeptWorkspace) {
  workspace.layout = kept.layout;
  workspace.filter = kept.filter;
  workspace.sceneName = kept.sceneName;
  for (const t of kept.hiddenTypes) graphModel.hiddenTypes.add(t);
  for (const p of kept.hiddenPredicates) graphModel.hiddenPredicates.add(p);
  for (const [p, m] of kept.edgeLabels) graphModel.edgeLabelModes.set(p, m);
}

// A reload or a closed tab keeps the workspace as it is at that moment (places included).
if (typeof window !== 'undefined') window.addEventListener('pagehide', keepWorkspace);
