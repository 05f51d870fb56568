// How elements become the graph's nodes and edges: concepts as nodes,
// propositions as edges, and for a proposition another one points at a
// small "link node" (key: its id), anchored to its own endpoints by thin
// unlabeled edges. New nodes are placed around a given node (else the
// centre) and reported, to be drawn marked as new.
import { LINK_NODE_COLOR, typeColor } from '../colors';
import { isConcept, isProposition, type ConceptNode, type Element, type PropositionLink } from '../kip';
import type { KipGraph } from './model';

/** The colour of a link (before the styling rules). */
export const EDGE_COLOR = '#9aa3b5';

/** What adding reads and writes. */
export interface InsertTarget {
  readonly graph: KipGraph;
  /** Every element the graph shows, by id. */
  readonly elements: Map<string, Element>;
  labelOf(c: ConceptNode): string;
  /** A node was created (not refreshed). */
  markNew(id: string): void;
}

/** Ids that propositions among `elements` point at and `known` does not hold. */
export function missingEndpoints(known: Map<string, Element>, elements: Iterable<Element>): string[] {
  const missing = new Set<string>();
  const has = (id: string) => known.has(id);
  const incoming = new Map<string, Element>();
  for (const e of elements) incoming.set(e.id, e);
  for (const e of incoming.values()) {
    if (!isProposition(e)) continue;
    for (const end of [e.subject, e.object]) if (!has(end) && !incoming.has(end)) missing.add(end);
  }
  return [...missing];
}

/**
 * Adds (or refreshes) `list`'s elements; returns the ids of the nodes and
 * edges it created. Propositions whose endpoints are unknown are skipped.
 */
export function insertElements(t: InsertTarget, list: Element[], near?: string): string[] {
  const added: string[] = [];
  const centre = near && t.graph.hasNode(near) ? t.graph.getNodeAttributes(near) : { x: 0, y: 0 };
  const spread = Math.max(1, Math.sqrt(t.graph.order + list.length));
  const place = () => ({
    x: centre.x + (Math.random() - 0.5) * spread,
    y: centre.y + (Math.random() - 0.5) * spread,
  });
  for (const e of list) t.elements.set(e.id, e);
  for (const e of list) {
    if (!isConcept(e)) continue;
    const attrs = {
      label: t.labelOf(e),
      color: typeColor(e.type),
      kind: 'concept' as const,
      kipType: e.type,
    };
    if (t.graph.hasNode(e.id)) t.graph.mergeNodeAttributes(e.id, attrs);
    else {
      t.graph.addNode(e.id, { ...attrs, ...place(), size: 7 });
      added.push(e.id);
      t.markNew(e.id);
    }
  }
  // Propositions after concepts; several passes so a link to a link to a
  // link resolves whatever order the elements came in.
  let pending = list.filter(isProposition);
  for (let pass = 0; pass < 4 && pending.length; pass++) {
    const later: PropositionLink[] = [];
    for (const p of pending) {
      if (!endpointReady(t, p.subject) || !endpointReady(t, p.object)) {
        later.push(p);
        continue;
      }
      const s = ensureEndpoint(t, p.subject, place);
      const o = ensureEndpoint(t, p.object, place);
      if (!s || !o) continue;
      if (t.graph.hasEdge(p.id)) continue;
      t.graph.addDirectedEdgeWithKey(p.id, s, o, {
        label: p.predicate,
        predicate: p.predicate,
        color: EDGE_COLOR,
        size: 1.6,
        type: 'arrow',
      });
      added.push(p.id);
      if (t.graph.hasNode(p.id)) anchorLinkNode(t.graph, p);
    }
    pending = later;
  }
  return added;
}

function endpointReady(t: InsertTarget, id: string): boolean {
  return t.elements.has(id);
}

/** The node standing for an endpoint: the concept, or the link node of a proposition. */
function ensureEndpoint(t: InsertTarget, id: string, place: () => { x: number; y: number }): string | null {
  const e = t.elements.get(id);
  if (!e) return null;
  if (isConcept(e)) return t.graph.hasNode(id) ? id : null;
  if (!t.graph.hasNode(id)) {
    const s = t.graph.hasNode(e.subject) ? t.graph.getNodeAttributes(e.subject) : null;
    const o = t.graph.hasNode(e.object) ? t.graph.getNodeAttributes(e.object) : null;
    const at = s && o ? { x: (s.x + o.x) / 2, y: (s.y + o.y) / 2 } : place();
    t.graph.addNode(id, {
      ...at,
      size: 4,
      color: LINK_NODE_COLOR,
      label: `⟨${e.predicate}⟩`,
      kind: 'link',
      kipType: 'proposition',
    });
    t.markNew(id);
    anchorLinkNode(t.graph, e);
  }
  return id;
}

function anchorLinkNode(graph: KipGraph, p: PropositionLink) {
  for (const [from, to, key] of [
    [p.subject, p.id, `${p.id}#s`],
    [p.id, p.object, `${p.id}#o`],
  ] as const) {
    if (graph.hasNode(from) && graph.hasNode(to) && !graph.hasEdge(key)) {
      graph.addDirectedEdgeWithKey(key, from, to, {
        label: '',
        predicate: p.predicate,
        color: '#c3c8d3',
        size: 0.6,
        type: 'line',
        anchor: true,
      });
    }
  }
}
