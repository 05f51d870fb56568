// The graph view exported as it is drawn: an SVG of the shown nodes and
// links at their drawn positions, in the theme's colours, and a PNG drawn
// from it, each saved as a file.
import { graphModel, reportError } from '../state.svelte';
import { graphSvg, svgToPng, type SvgEdge, type SvgNode } from '../export';
import { saveFile } from '../save';
import { LABEL_FONT, type GraphRenderer } from './renderer';
import type { Point } from './selection';
import { readTheme } from './view-dom';

export interface ViewSvg {
  svg: string;
  width: number;
  height: number;
}

/** The view as an SVG document, at the container's size; null before the renderer exists. */
export function svgOfView(renderer: GraphRenderer | null, container: HTMLElement | undefined): ViewSvg | null {
  if (!renderer || !container) return null;
  const { width, height } = container.getBoundingClientRect();
  const t = readTheme();
  const nodes: SvgNode[] = [];
  const at = new Map<string, Point>();
  graphModel.graph.forEachNode((id, a) => {
    if (a.hidden) return;
    const p = renderer.nodeViewportPosition(id);
    if (!p) return;
    at.set(id, p);
    nodes.push({ x: p.x, y: p.y, r: a.size, color: a.color, label: a.label, kind: a.kind, ring: graphModel.marked.has(id) ? '#f08c00' : undefined });
  });
  const edges: SvgEdge[] = [];
  graphModel.graph.forEachEdge((_id, a, s, tgt) => {
    const p = at.get(s);
    const q = at.get(tgt);
    if (a.hidden || !p || !q) return;
    edges.push({ x1: p.x, y1: p.y, x2: q.x, y2: q.y, color: a.color, width: a.size, label: a.anchor ? undefined : a.label, arrow: a.type === 'arrow' });
  });
  const svg = graphSvg(nodes, edges, { width, height, background: t.background || '#ffffff', label: t.label || '#263045', edgeLabel: t.edgeLabel || '#6b7488', font: LABEL_FONT });
  return { svg, width, height };
}

/** Saves the view as `kip-graph.svg` (a failure is reported, not thrown). */
export function saveSvg(v: ViewSvg) {
  saveFile('kip-graph.svg', v.svg, 'image/svg+xml').catch((e) => reportError(e, 'Exporting SVG failed'));
}

/** Saves the view as `kip-graph.png`, drawn from its SVG. */
export async function savePng(v: ViewSvg) {
  try {
    await saveFile('kip-graph.png', await svgToPng(v.svg, v.width, v.height));
  } catch (e) {
    reportError(e, 'Exporting PNG failed');
  }
}
