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
  const around = near && t.graph.hasNode(near) ? near : null;
  const centre = around ? t.graph.getNodeAttributes(around) : { x: 0, y: 0 };
  const spread = Math.max(1, Math.sqrt(t.graph.order + list.length));
  // Around a node (an expansion), new nodes go on a ring at the distance
  // of its links (else of the graph's), in the widest gap its neighbours
  // leave, so they land beside it and not on a neighbouring cluster.
  const ring = around ? ringAround(t.graph, around) : null;
  let placed = 0;
  const place = () => {
    if (!ring) return { x: centre.x + (Math.random() - 0.5) * spread, y: centre.y + (Math.random() - 0.5) * spread };
    const i = placed++;
    const turn = Math.floor(i / ring.slots);
    const a = ring.start + (ring.width * ((i % ring.slots) + 0.5)) / ring.slots + turn * 0.3;
    const r = ring.radius * (1 + 0.45 * turn);
    return { x: centre.x + r * Math.cos(a), y: centre.y + r * Math.sin(a) };
  };
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

/** Where an expansion's new nodes go: a radius, and the arc (start, width) its shown neighbours leave widest. */
function ringAround(graph: KipGraph, id: string): { radius: number; start: number; width: number; slots: number } {
  const c = graph.getNodeAttributes(id);
  const angles: number[] = [];
  const lengths: number[] = [];
  graph.forEachNeighbor(id, (_n, a) => {
    const d = Math.hypot(a.x - c.x, a.y - c.y);
    if (d > 0) {
      lengths.push(d);
      angles.push(Math.atan2(a.y - c.y, a.x - c.x));
    }
  });
  if (!lengths.length) {
    // No neighbour yet: the graph's typical link length, else a default.
    graph.forEachEdge((_e, _a, _s, _t, sa, ta) => {
      if (lengths.length < 200) lengths.push(Math.hypot(sa.x - ta.x, sa.y - ta.y));
    });
  }
  lengths.sort((a, b) => a - b);
  const radius = Math.max(lengths[Math.floor(lengths.length / 2)] ?? 0, 1);
  if (angles.length < 2) return { radius, start: (angles[0] ?? 0) + 0.6, width: 2 * Math.PI - 1.2, slots: 12 };
  angles.sort((a, b) => a - b);
  let start = angles[angles.length - 1];
  let width = angles[0] + 2 * Math.PI - start;
  for (let i = 1; i < angles.length; i++) {
    if (angles[i] - angles[i - 1] > width) {
      start = angles[i - 1];
      width = angles[i] - angles[i - 1];
    }
  }
  // A narrow gap still holds a few; more go on outer turns.
  return { radius, start, width: Math.max(width, 1.2), slots: Math.max(4, Math.round(width / 0.35)) };
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
