// Scenes: the graph view saved with the nexus under a name (its nodes with
// their places, pins and hidden ones, its links, its styling rules) and
// opened again where it was left. The view frames an opened scene itself.
import type { Json } from '../kip';
import { addToGraph, fetchElements, graphModel } from '../state.svelte';
import type { Scene } from '../export';
import { SCENES_KEY, saveNexusSetting, STYLES_KEY } from '../nexus-settings.svelte';
import { readRules, ruleJson } from './styling';

/** The graph as it is now, as a scene named `name`. */
export function sceneOf(name: string): Scene {
  const nodes: Scene['nodes'] = [];
  graphModel.graph.forEachNode((id, a) => {
    if (a.kind === 'concept' || graphModel.elements.has(id)) nodes.push({ id, x: a.x, y: a.y, pinned: !!a.fixed || undefined, hidden: !!a.hidden || undefined });
  });
  const links = graphModel.graph.filterEdges((_e, a) => !a.anchor);
  return { name, at: new Date().toISOString(), nodes, links, styles: graphModel.styleRules };
}

/** Keeps `scenes` with the nexus (their styling rules as plain JSON). */
export async function storeScenes(scenes: Scene[]) {
  await saveNexusSetting(SCENES_KEY, JSON.parse(JSON.stringify(scenes.map((s) => ({ ...s, styles: s.styles.map(ruleJson) })))) as Json);
}

/** Keeps `scenes` with the nexus without `scene`. */
export async function dropScene(scenes: Scene[], scene: Scene) {
  await saveNexusSetting(SCENES_KEY, JSON.parse(JSON.stringify(scenes.filter((s) => s.name !== scene.name))) as Json);
}

/**
 * Replaces the graph by `scene`: its elements as they are now, its styling
 * rules (kept as the nexus's), each node back in its place, pinned or
 * hidden as it was (`keepStyles`: the rules in force stay, for the
 * workspace a reload brings back). Returns how many of its elements no
 * longer exist.
 */
export async function loadScene(scene: Scene, opts: { keepStyles?: boolean } = {}): Promise<number> {
  const ids = [...new Set([...scene.nodes.map((n) => n.id), ...scene.links])];
  const found = await fetchElements(ids);
  graphModel.clear();
  await addToGraph(found);
  if (!opts.keepStyles) {
    const rules = readRules(scene.styles as unknown as Json);
    graphModel.setStyleRules(rules);
    void saveNexusSetting(STYLES_KEY, rules.map(ruleJson)).catch(() => {});
  }
  graphModel.quietly(() => {
    for (const n of scene.nodes) {
      if (!graphModel.graph.hasNode(n.id)) continue;
      graphModel.graph.mergeNodeAttributes(n.id, { x: n.x, y: n.y, fixed: !!n.pinned });
      if (n.hidden) graphModel.hiddenNodes.add(n.id);
    }
  });
  graphModel.applyFilters();
  return ids.length - found.length;
}
