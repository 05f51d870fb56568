// The explorer's graph: concepts as nodes, propositions as edges, in one
// graphology multigraph that both renderers (WebGL and canvas) draw.
//
// A higher-order link — a proposition whose subject or object is another
// proposition — cannot attach to an edge, so the target proposition also
// gets a small "link node" (key: its id), anchored to its own endpoints by
// thin unlabeled edges; the higher-order link then points at that node.
//
// The model owns what the view shows and how: filters, the time window,
// marks, styling, undo. How elements become nodes and edges is insert.ts's.
import Graph from 'graphology';
import { typeColor } from '../colors';
import { isConcept, type ConceptNode, type Element } from '../kip';
import { EDGE_COLOR, insertElements, missingEndpoints } from './insert';
import type { EdgeLabelMode } from './labels';
import { ranges, styleOf, type StyleRule } from './styling';

export interface NodeAttrs {
  x: number;
  y: number;
  size: number;
  color: string;
  label: string;
  kind: 'concept' | 'link';
  kipType: string;
  hidden?: boolean;
  fixed?: boolean;
  highlighted?: boolean;
  forceLabel?: boolean;
  zIndex?: number;
}

export interface EdgeAttrs {
  label: string;
  color: string;
  size: number;
  type: 'arrow' | 'line';
  predicate: string;
  anchor?: boolean;
  hidden?: boolean;
  forceLabel?: boolean;
}

export type KipGraph = Graph<NodeAttrs, EdgeAttrs>;

export interface TypeInfo {
  displayHint?: string;
}

/** How long a node that just arrived stays marked as new. */
export const FRESH_MS = 4000;

/** Everything `clear` drops, so the clear can be undone. */
export interface GraphSnapshot {
  graph: ReturnType<KipGraph['export']>;
  elements: [string, Element][];
  hiddenNodes: string[];
  hiddenTypes?: string[];
  hiddenPredicates?: string[];
}

/** Graph actions kept for undo. */
export const UNDO_DEPTH = 60;
/** Additions this close together (one expansion adds in several steps) are one action. */
const ADD_COALESCE_MS = 600;

/** The colour of the links of a path found between two concepts. */
export const PATH_COLOR = '#f08c00';

export class GraphModel {
  readonly graph: KipGraph = new Graph<NodeAttrs, EdgeAttrs>({ multi: true, type: 'directed', allowSelfLoops: true });
  readonly elements = new Map<string, Element>();
  readonly hiddenTypes = new Set<string>();
  readonly hiddenPredicates = new Set<string>();
  readonly hiddenNodes = new Set<string>();
  /** Nodes added recently, with when (ms since the epoch): drawn marked as new. */
  readonly fresh = new Map<string, number>();
  /** Nodes added since the view last framed them (see `takeArrivals`). */
  private arrivals = new Set<string>();
  /** The node the last arrivals were added around (an expansion), if they were. */
  arrivalAnchor: string | null = null;
  /** Per predicate: edge labels always on, always off, or by density (absent). */
  readonly edgeLabelModes = new Map<string, EdgeLabelMode>();
  private listeners = new Set<() => void>();
  hint: (type: string) => string | undefined = () => undefined;
  /** Styling rules, in order (see `styling.ts`). */
  styleRules: StyleRule[] = [];
  /** Nodes and links drawn marked: a found path, or what changed since a moment. */
  readonly marked = new Set<string>();
  /** Links of the last path search, drawn in `PATH_COLOR`. */
  readonly pathLinks = new Set<string>();
  /** Recall heat (issue 31 §7): reads per element and by whom; sizes nodes while set. */
  heat: Map<string, { reads: number; by: string }> | null = null;
  /** Elements outside the time window (hidden while it is set). */
  timeWindow: { field: '_created_at' | '_updated_at'; from: string; to: string } | null = null;
  /** What the property filter leaves out: drawn dimmed, or hidden while `filterHides`. */
  filteredOut = new Set<string>();
  filterHides = false;
  private undoStack: { snapshot: GraphSnapshot; kind: string; at: number }[] = [];
  private redoStack: GraphSnapshot[] = [];
  /** While set, changes are not undo steps (refreshes after another process's write). */
  private quiet = 0;

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  private emit() {
    for (const l of this.listeners) l();
  }

  /** Empties the graph; returns what it held, for `restore` (undo). */
  clear(): GraphSnapshot {
    const snapshot = this.snapshot();
    this.checkpoint('clear');
    this.graph.clear();
    this.elements.clear();
    this.hiddenNodes.clear();
    this.fresh.clear();
    this.arrivals.clear();
    this.emit();
    return snapshot;
  }

  /** The whole state of the view's graph: for undo, and for `clear`'s own undo. */
  snapshot(): GraphSnapshot {
    return {
      graph: this.graph.export(),
      elements: [...this.elements],
      hiddenNodes: [...this.hiddenNodes],
      hiddenTypes: [...this.hiddenTypes],
      hiddenPredicates: [...this.hiddenPredicates],
    };
  }

  /** Puts back what `clear` took (nodes where they were). */
  restore(s: GraphSnapshot) {
    this.graph.clear();
    this.graph.import(s.graph);
    this.elements.clear();
    for (const [k, v] of s.elements) this.elements.set(k, v);
    this.hiddenNodes.clear();
    for (const n of s.hiddenNodes) this.hiddenNodes.add(n);
    if (s.hiddenTypes) {
      this.hiddenTypes.clear();
      for (const t of s.hiddenTypes) this.hiddenTypes.add(t);
    }
    if (s.hiddenPredicates) {
      this.hiddenPredicates.clear();
      for (const p of s.hiddenPredicates) this.hiddenPredicates.add(p);
    }
    this.applyFilters();
    this.emit();
  }

  /**
   * Records the graph as it is before an action, so `undo` can return to
   * it. Call it first thing in every action; additions in quick succession
   * (one expansion fetches and adds in steps) count as one.
   */
  checkpoint(kind: string) {
    if (this.quiet) return;
    const now = Date.now();
    const last = this.undoStack.at(-1);
    if (kind === 'add' && last?.kind === 'add' && now - last.at < ADD_COALESCE_MS) {
      last.at = now;
      return;
    }
    this.undoStack.push({ snapshot: this.snapshot(), kind, at: now });
    if (this.undoStack.length > UNDO_DEPTH) this.undoStack.shift();
    this.redoStack = [];
  }

  /** Runs `f` without recording undo steps (a refresh is not the user's action). */
  quietly<T>(f: () => T): T {
    this.quiet++;
    try {
      return f();
    } finally {
      this.quiet--;
    }
  }

  get canUndo() {
    return this.undoStack.length > 0;
  }
  get canRedo() {
    return this.redoStack.length > 0;
  }

  /** Returns to the graph before the last action; `false` when there is none. */
  undo(): boolean {
    const step = this.undoStack.pop();
    if (!step) return false;
    this.redoStack.push(this.snapshot());
    this.restore(step.snapshot);
    return true;
  }

  redo(): boolean {
    const next = this.redoStack.pop();
    if (!next) return false;
    this.undoStack.push({ snapshot: this.snapshot(), kind: 'redo', at: 0 });
    this.restore(next);
    return true;
  }

  /** How new a node still is: 1 when it just arrived, 0 after `FRESH_MS`. */
  freshness(id: string, now = Date.now()): number {
    const at = this.fresh.get(id);
    if (at === undefined) return 0;
    const left = 1 - (now - at) / FRESH_MS;
    if (left <= 0) {
      this.fresh.delete(id);
      return 0;
    }
    return left;
  }

  /** The nodes added since the last call (the view frames them once). */
  takeArrivals(): string[] {
    const ids = [...this.arrivals].filter((id) => this.graph.hasNode(id));
    this.arrivals.clear();
    return ids;
  }

  edgeLabelMode(predicate: string): EdgeLabelMode {
    return this.edgeLabelModes.get(predicate) ?? 'auto';
  }

  /** auto → on → off → auto. */
  cycleEdgeLabels(predicate: string): EdgeLabelMode {
    const next: EdgeLabelMode = { auto: 'on', on: 'off', off: 'auto' }[this.edgeLabelMode(predicate)] as EdgeLabelMode;
    if (next === 'auto') this.edgeLabelModes.delete(predicate);
    else this.edgeLabelModes.set(predicate, next);
    this.emit();
    return next;
  }

  get size() {
    return this.graph.order;
  }

  labelOf(c: ConceptNode): string {
    const hint = this.hint(c.type);
    return hint ? `${hint} ${c.name}` : c.name;
  }

  /** Ids that propositions among `elements` point at and the graph does not hold. */
  missingEndpoints(elements: Iterable<Element>): string[] {
    return missingEndpoints(this.elements, elements);
  }

  /**
   * Adds (or refreshes) elements. New nodes appear around `near` when given,
   * else around the centre. Propositions whose endpoints are unknown are
   * skipped: call `missingEndpoints` first and add those too.
   */
  add(elements: Iterable<Element>, near?: string): string[] {
    const list = [...elements];
    if (list.some((e) => !this.graph.hasNode(e.id) && !this.graph.hasEdge(e.id))) this.checkpoint('add');
    if (near && this.graph.hasNode(near)) this.arrivalAnchor = near;
    const added = insertElements(
      { graph: this.graph, elements: this.elements, labelOf: (c) => this.labelOf(c), markNew: (id) => this.markNew(id) },
      list,
      near,
    );
    this.applyFilters();
    this.updateSizes();
    this.emit();
    return added;
  }

  private markNew(id: string) {
    this.fresh.set(id, Date.now());
    this.arrivals.add(id);
  }

  remove(id: string) {
    this.checkpoint('remove');
    if (this.graph.hasNode(id)) this.graph.dropNode(id);
    if (this.graph.hasEdge(id)) this.graph.dropEdge(id);
    this.elements.delete(id);
    this.emit();
  }

  /** Hides several nodes as one action. */
  hideAll(ids: string[]) {
    this.checkpoint('hide');
    for (const id of ids) this.hiddenNodes.add(id);
    this.applyFilters();
    this.emit();
  }

  /** Removes several elements as one action. */
  removeAll(ids: string[]) {
    this.checkpoint('remove');
    this.quietly(() => {
      for (const id of ids) {
        if (this.graph.hasNode(id)) this.graph.dropNode(id);
        if (this.graph.hasEdge(id)) this.graph.dropEdge(id);
        this.elements.delete(id);
      }
    });
    this.emit();
  }

  /** Pins (or, when all are pinned, unpins) several nodes as one action; returns the new state. */
  togglePins(ids: string[]): boolean {
    const nodes = ids.filter((id) => this.graph.hasNode(id));
    if (!nodes.length) return false;
    this.checkpoint('pin');
    const pin = !nodes.every((id) => this.graph.getNodeAttribute(id, 'fixed'));
    for (const id of nodes) this.graph.setNodeAttribute(id, 'fixed', pin);
    this.emit();
    return pin;
  }

  /** Bigger nodes for better-connected concepts (log-scaled), then the styling rules. */
  updateSizes() {
    this.restyle();
  }

  /** Replaces the styling rules and redraws every element's look. */
  setStyleRules(rules: StyleRule[]) {
    this.styleRules = rules;
    this.restyle();
    this.emit();
  }

  /** Shows recall heat (or, with `null`, stops): see `heatLook`. */
  setHeat(heat: Map<string, { reads: number; by: string }> | null) {
    this.heat = heat;
    this.restyle();
    this.emit();
  }

  /** A read node's size grows with the log of its reads (a cold one stays small) and its caption says by whom. */
  private heatLook(n: string, look: { color: string; size: number; label: string }, hottest: number) {
    const h = this.heat?.get(n);
    if (!h) return { ...look, size: 4 };
    const size = 6 + 16 * (Math.log2(1 + h.reads) / Math.log2(1 + hottest));
    return { ...look, size, label: `${look.label} · read ${h.reads}× by ${h.by}` };
  }

  /** Each element's colour, size and caption: by type and degree, then by the rules (and recall heat, while on). */
  restyle() {
    const rules = this.styleRules;
    const seen = ranges(rules, this.elements.values());
    const hottest = this.heat ? Math.max(1, ...[...this.heat.values()].map((h) => h.reads)) : 1;
    this.graph.forEachNode((n, a) => {
      if (a.kind !== 'concept') return;
      const e = this.elements.get(n);
      const size = 5 + Math.min(10, Math.log2(1 + this.graph.degree(n)) * 2);
      const base = { color: typeColor(a.kipType), size, label: e && isConcept(e) ? this.labelOf(e) : a.label };
      let look = rules.length && e ? styleOf(e, base, rules, seen) : base;
      if (this.heat) look = this.heatLook(n, look, hottest);
      if (a.size !== look.size || a.color !== look.color || a.label !== look.label) this.graph.mergeNodeAttributes(n, look);
    });
    this.graph.forEachEdge((id, a) => {
      if (a.anchor) return;
      const e = this.elements.get(id);
      const base = { color: EDGE_COLOR, size: 1.6, label: a.predicate };
      let look = rules.length && e ? styleOf(e, base, rules, seen, true) : base;
      if (this.pathLinks.has(id)) look = { ...look, color: PATH_COLOR, size: Math.max(look.size, 3.2) };
      if (a.size !== look.size || a.color !== look.color || a.label !== look.label) this.graph.mergeEdgeAttributes(id, look);
    });
  }

  /** The colour a type's nodes get in the legend: a type rule's, else the type's own. */
  typeLook(type: string): string {
    let color = typeColor(type);
    for (const r of this.styleRules) if (r.on === 'type' && r.name === type && r.color) color = r.color;
    return color;
  }

  /** Marks a found path (its nodes ringed, its links coloured); an empty call clears it. */
  showPaths(nodes: Iterable<string> = [], links: Iterable<string> = []) {
    this.marked.clear();
    this.pathLinks.clear();
    for (const n of nodes) this.marked.add(n);
    for (const l of links) this.pathLinks.add(l);
    this.restyle();
    this.emit();
  }

  /** Marks elements (nodes ringed) without touching the path's links. */
  mark(ids: Iterable<string>) {
    this.marked.clear();
    for (const id of ids) this.marked.add(id);
    this.emit();
  }

  /** Whether an element lies outside the time window (elements without the stamp stay). */
  private outOfTime(id: string): boolean {
    const w = this.timeWindow;
    if (!w) return false;
    const at = this.elements.get(id)?.metadata[w.field];
    if (typeof at !== 'string') return false;
    return at < w.from || at > w.to;
  }

  /** Shows only elements stamped inside `[from, to]` (ISO 8601) on `field`; `null` shows all. */
  setTimeWindow(w: GraphModel['timeWindow']) {
    this.timeWindow = w;
    this.applyFilters();
    this.emit();
  }

  /** Sets what the property filter leaves out (see property-filter.ts), and whether it is hidden or dimmed. */
  setFilteredOut(ids: Set<string>, hide: boolean) {
    if (hide === this.filterHides && ids.size === this.filteredOut.size && [...ids].every((id) => this.filteredOut.has(id))) return;
    this.filteredOut = ids;
    this.filterHides = hide;
    this.applyFilters();
    this.emit();
  }

  applyFilters() {
    const out = (id: string) => this.filterHides && this.filteredOut.has(id);
    this.graph.forEachNode((n, a) => {
      const hidden = this.hiddenNodes.has(n) || (a.kind === 'concept' && this.hiddenTypes.has(a.kipType)) || this.outOfTime(n) || out(n);
      if (!!a.hidden !== hidden) this.graph.setNodeAttribute(n, 'hidden', hidden);
    });
    this.graph.forEachEdge((e, a) => {
      const hidden = this.hiddenPredicates.has(a.predicate) || (!a.anchor && (this.outOfTime(e) || out(e)));
      if (!!a.hidden !== hidden) this.graph.setEdgeAttribute(e, 'hidden', hidden);
    });
  }

  toggleType(type: string) {
    this.checkpoint('filter');
    if (this.hiddenTypes.has(type)) this.hiddenTypes.delete(type);
    else this.hiddenTypes.add(type);
    this.applyFilters();
    this.emit();
  }

  togglePredicate(predicate: string) {
    this.checkpoint('filter');
    if (this.hiddenPredicates.has(predicate)) this.hiddenPredicates.delete(predicate);
    else this.hiddenPredicates.add(predicate);
    this.applyFilters();
    this.emit();
  }

  hide(id: string) {
    this.hideAll([id]);
  }

  showAll() {
    this.checkpoint('show');
    this.hiddenNodes.clear();
    this.hiddenTypes.clear();
    this.hiddenPredicates.clear();
    this.applyFilters();
    this.emit();
  }

  togglePin(id: string): boolean {
    if (!this.graph.hasNode(id)) return false;
    this.checkpoint('pin');
    const pinned = !this.graph.getNodeAttribute(id, 'fixed');
    this.graph.setNodeAttribute(id, 'fixed', pinned);
    this.emit();
    return pinned;
  }

  /** Concept types in the graph with their node counts and the colours their nodes are drawn in (rules change them), most frequent first. */
  typeCounts(): { type: string; count: number; color: string; colors: string[] }[] {
    const counts = new Map<string, number>();
    const colors = new Map<string, Set<string>>();
    this.graph.forEachNode((_, a) => {
      if (a.kind !== 'concept') return;
      counts.set(a.kipType, (counts.get(a.kipType) ?? 0) + 1);
      (colors.get(a.kipType) ?? colors.set(a.kipType, new Set()).get(a.kipType))?.add(a.color);
    });
    return [...counts]
      .map(([type, count]) => {
        const drawn = [...(colors.get(type) ?? [])];
        return { type, count, color: drawn.length === 1 ? drawn[0] : this.typeLook(type), colors: drawn };
      })
      .sort((a, b) => b.count - a.count || a.type.localeCompare(b.type));
  }

  predicateCounts(): { predicate: string; count: number }[] {
    const counts = new Map<string, number>();
    this.graph.forEachEdge((_, a) => {
      if (!a.anchor) counts.set(a.predicate, (counts.get(a.predicate) ?? 0) + 1);
    });
    return [...counts]
      .map(([predicate, count]) => ({ predicate, count }))
      .sort((a, b) => b.count - a.count || a.predicate.localeCompare(b.predicate));
  }

  visibleCount(): number {
    return this.graph.filterNodes((_, a) => !a.hidden).length;
  }
}
