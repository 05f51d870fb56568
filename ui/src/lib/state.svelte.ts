// Application state shared by the views: the transport, the schema the
// editor and the graph use (types with their display hints and instance
// schemas, predicates), the graph model, the selection, notifications and
// the live-update feed. Views read it reactively (Svelte 5 runes).
import { formatTime } from './time';
import type { ChangeNotice, ImportUnderWay, Transport } from '../transport';
import { ApiFailure } from '../transport';
import { GraphModel } from './graph/model';
import { collectElements, isConcept, isElement, type ConceptNode, type Element, type Json, type JsonObject } from './kip';
import { loadNexusSettings, nexusSetting, STYLES_KEY } from './nexus-settings.svelte';
import { readRules } from './graph/styling';
import { pref, setPref } from './prefs.svelte';

export type View = 'graph' | 'primer' | 'console' | 'import' | 'trace' | 'health';

export interface TypeDef {
  name: string;
  description?: string;
  displayHint?: string;
  instanceSchema: Record<string, { type?: string; is_required?: boolean; description?: string }>;
}

export interface PredicateDef {
  name: string;
  description?: string;
  subjectTypes: string[];
  objectTypes: string[];
}

export interface Toast {
  id: number;
  kind: 'info' | 'error' | 'success';
  text: string;
  detail?: string;
  /** A button on the notice (e.g. Undo); the notice closes when it runs. */
  action?: { label: string; run: () => void };
}

let transport: Transport | null = null;

export function api(): Transport {
  if (!transport) throw new Error('transport not initialised');
  return transport;
}

export const graphModel = new GraphModel();

export const app = $state({
  ready: false,
  view: 'graph' as View,
  nexusPath: '',
  transportKind: 'http' as 'http' | 'tauri',
  selection: null as string | null,
  /** Bumped after every committed write (any process): views re-read. */
  liveSeq: 0,
  activity: [] as { seq: number; text: string; at: string; foreign: boolean; trace?: string }[],
  /** A trace entry to open in the Trace view (the live status links there). */
  traceEntry: null as string | null,
  toasts: [] as Toast[],
  /** Imports under way that report progress: the watched folder's large files, and dropped files (desktop). */
  watchImports: [] as ImportUnderWay[],
  dropImports: [] as ImportUnderWay[],
  types: [] as TypeDef[],
  predicates: [] as PredicateDef[],
  /** Text sent to the console by other views ("open in console"). */
  consoleRequest: null as { text: string; run: boolean } | null,
  graphVersion: 0,
  /** The graph view shows the schema map (a large memory's first view, or asked for). */
  schemaMap: false,
  /** The graph view shows its scene as a table too. */
  sceneTable: false,
  inspectorOpen: true,
  /** Per view, whether the inspector is folded to a strip (the console starts folded: it needs the width). */
  inspectorFolded: loadFolded(),
});

/** The inspector's folding per view, a preference (lib/prefs.svelte.ts). */
export function loadFolded(): Record<View, boolean> {
  const defaults: Record<View, boolean> = { graph: false, primer: false, console: true, import: false, trace: true, health: false };
  const saved = pref<JsonObject>('inspector-folded', {});
  return { ...defaults, ...(saved && typeof saved === 'object' && !Array.isArray(saved) ? saved : {}) } as Record<View, boolean>;
}

/** Folds or unfolds the inspector in the current view, and remembers it. */
export function foldInspector(folded: boolean) {
  app.inspectorFolded = { ...app.inspectorFolded, [app.view]: folded };
  setPref('inspector-folded', { ...app.inspectorFolded });
}

let toastId = 0;
export function toast(kind: Toast['kind'], text: string, detail?: string, action?: Toast['action']) {
  const id = ++toastId;
  app.toasts = [...app.toasts, { id, kind, text, detail, action }];
  // A notice with an action (Undo) stays long enough to use it.
  setTimeout(() => dismissToast(id), kind === 'error' ? 9000 : action ? 10000 : 4500);
}
export function dismissToast(id: number) {
  app.toasts = app.toasts.filter((t) => t.id !== id);
}

export function reportError(e: unknown, context?: string) {
  const text = e instanceof ApiFailure ? e.error.message : e instanceof Error ? e.message : String(e);
  const hint = e instanceof ApiFailure ? e.error.hint : undefined;
  toast('error', context ? `${context}: ${text}` : text, hint);
}

export function typeDef(name: string): TypeDef | undefined {
  return app.types.find((t) => t.name === name);
}

graphModel.hint = (type) => typeDef(type)?.displayHint;
graphModel.onChange(() => {
  app.graphVersion++;
});

/** Runs one KQL/META command and returns its result, or throws its KIP error. */
export async function query(command: string, parameters?: Record<string, Json>): Promise<{ result: Json; next_cursor?: string }> {
  const r = await api().execute({ command, parameters });
  if (r.error) throw new ApiFailure(r.error);
  return { result: (r.result ?? null) as Json, next_cursor: r.next_cursor };
}

function str(v: Json | undefined): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function strList(v: Json | undefined): string[] {
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string');
  if (typeof v === 'string') return [v];
  return [];
}

/**
 * The definitions' own icons. Genesis gives `$ConceptType` the 📦 that the
 * medical example's Product uses too (both verbatim from the specification),
 * so the meta types are drawn with icons no domain type is likely to take.
 */
const META_HINTS: Record<string, string> = { $ConceptType: '🧩', $PropositionType: '🔗' };

/** Loads every concept type and predicate definition (for styling and completion). */
export async function loadSchema() {
  const [types, preds] = await Promise.all([
    query('FIND(?t) WHERE { ?t {type: "$ConceptType"} } LIMIT 1000'),
    query('FIND(?p) WHERE { ?p {type: "$PropositionType"} } LIMIT 1000'),
  ]);
  app.types = (Array.isArray(types.result) ? types.result : []).filter(isConcept).map((t) => ({
    name: t.name,
    description: str(t.attributes.description),
    displayHint: META_HINTS[t.name] ?? str(t.attributes.display_hint),
    instanceSchema: (t.attributes.instance_schema ?? {}) as TypeDef['instanceSchema'],
  }));
  app.predicates = (Array.isArray(preds.result) ? preds.result : []).filter(isConcept).map((p) => ({
    name: p.name,
    description: str(p.attributes.description),
    subjectTypes: strList(p.attributes.subject_types),
    objectTypes: strList(p.attributes.object_types),
  }));
  // Labels carry display hints: refresh them now that hints are known.
  for (const e of graphModel.elements.values()) {
    if (isConcept(e) && graphModel.graph.hasNode(e.id)) {
      graphModel.graph.setNodeAttribute(e.id, 'label', graphModel.labelOf(e));
    }
  }
}

/** Fetches elements by id in one batch request (one FIND per id). */
export async function fetchElements(ids: string[]): Promise<Element[]> {
  if (!ids.length) return [];
  const out: Element[] = [];
  for (let i = 0; i < ids.length; i += 200) {
    const chunk = ids.slice(i, i + 200);
    const r = await api().execute({
      commands: chunk.map((id) => ({
        command: id.startsWith('P:') ? 'FIND(?e) WHERE { ?e (id: :id) }' : 'FIND(?e) WHERE { ?e {id: :id} }',
        parameters: { id },
      })),
    });
    if (r.error) throw new ApiFailure(r.error);
    for (const item of (r.result ?? []) as { result?: Json }[]) {
      const found = Array.isArray(item?.result) ? item.result : [];
      for (const e of found) if (isElement(e)) out.push(e);
    }
  }
  return out;
}

/** Adds elements to the graph, first fetching the endpoints their links need. */
export async function addToGraph(elements: Iterable<Element>, near?: string): Promise<string[]> {
  let list = [...elements];
  for (let round = 0; round < 3; round++) {
    const missing = graphModel.missingEndpoints(list);
    if (!missing.length) break;
    list = [...list, ...(await fetchElements(missing))];
  }
  return graphModel.add(list, near);
}

/** Every element in a KIP result, added to the graph (or, `replace`, as a new graph; `highlight`: ringed); switches to it. */
export async function showResultInGraph(result: Json, opts: { replace?: boolean; highlight?: boolean } = {}) {
  const found = collectElements(result);
  if (!found.size) {
    toast('info', 'The result holds no concepts or propositions to draw.');
    return;
  }
  if (opts.replace) graphModel.clear();
  await addToGraph(found.values());
  // Links among what is shown make a graph of a plain list of concepts.
  await connectVisible([...found.values()].filter(isConcept).map((c) => c.id));
  if (opts.highlight) graphModel.mark([...found.keys()].filter((id) => graphModel.graph.hasNode(id)));
  app.view = 'graph';
}

/** Adds the links between the given concepts and the graph's other concepts (bounded). */
export async function connectVisible(ids: string[]) {
  if (!ids.length || graphModel.size > 3000) return;
  const shown = new Set<string>();
  graphModel.graph.forEachNode((n, a) => {
    if (a.kind === 'concept') shown.add(n);
  });
  const r = await api().execute({
    commands: ids.slice(0, 100).map((id) => ({
      command: 'FIND(?l) WHERE { ?l (?s, ?p, ?o) ?s {id: :id} } LIMIT 200',
      parameters: { id },
    })),
  });
  const links: Element[] = [];
  for (const item of (r.result ?? []) as { result?: Json }[]) {
    for (const e of Array.isArray(item?.result) ? item.result : []) {
      // Links to shown concepts, and higher-order links to propositions (their
      // endpoints are fetched when missing).
      if (isElement(e) && e._type === 'PropositionLink' && (shown.has(e.object) || e.object.startsWith('P:'))) links.push(e);
    }
  }
  if (links.length) await addToGraph(links);
}

export async function openConceptsOfType(type: string, limit = 100) {
  const { result } = await query(`FIND(?x) WHERE { ?x {type: :type} } LIMIT ${limit}`, { type });
  await showResultInGraph(result);
}

export function openInConsole(text: string, run = false) {
  app.consoleRequest = { text, run };
  app.view = 'console';
}

export function select(id: string | null) {
  app.selection = id;
  if (id) app.inspectorOpen = true;
}

/** Describes a change notice in a sentence for the activity feed. */
export function describeChange(notice: ChangeNotice): { text: string; foreign: boolean; trace?: string }[] {
  return notice.changes.map((c) => {
    const s = c.stats;
    const parts: string[] = [];
    const add = (n: number, what: string) => n && parts.push(`${n} ${what}`);
    add(s.concepts_created, s.concepts_created === 1 ? 'concept created' : 'concepts created');
    add(s.concepts_updated, s.concepts_updated === 1 ? 'concept updated' : 'concepts updated');
    add(s.concepts_deleted, s.concepts_deleted === 1 ? 'concept deleted' : 'concepts deleted');
    add(s.propositions_created, s.propositions_created === 1 ? 'link created' : 'links created');
    add(s.propositions_updated, s.propositions_updated === 1 ? 'link updated' : 'links updated');
    add(s.propositions_deleted, s.propositions_deleted === 1 ? 'link deleted' : 'links deleted');
    // Who acted (the trace's originator), else the program of an older log.
    return { text: `${c.originator ?? c.origin}: ${parts.join(', ') || 'no change'}`, foreign: !c.own_process, trace: c.trace };
  });
}

export async function start(t: Transport) {
  transport = t;
  app.transportKind = t.kind;
  // The schema (display hints, completion) loads while the views start:
  // the first graph does not wait for it, and relabels itself when it lands.
  const schema = loadSchema().catch((e) => reportError(e, 'Loading the schema failed'));
  try {
    const info = await t.info();
    app.nexusPath = info.path;
  } catch {
    app.nexusPath = '';
  }
  // Styling rules and saved queries are the nexus's: read before the first graph.
  await loadNexusSettings(t);
  graphModel.setStyleRules(readRules(nexusSetting(STYLES_KEY)));
  t.subscribe((notice) => {
    const lines = describeChange(notice);
    const at = formatTime(new Date());
    // Newest first: a burst delivered as one notice lists its last write on top.
    const entries = lines.map((l, i) => ({ seq: notice.changes[i]?.seq ?? notice.last_seq, text: l.text, foreign: l.foreign, trace: l.trace, at }));
    app.activity = [...entries.reverse(), ...app.activity].slice(0, 50);
    app.liveSeq++;
    void refreshAfterChange();
  });
  app.ready = true;
  performance.mark('kip:ready');
  await schema;
}

/** After a write: reload the schema and the shown elements' data, drop deleted ones. */
async function refreshAfterChange() {
  try {
    await loadSchema();
    const ids = [...graphModel.elements.keys()].slice(0, 2000);
    if (!ids.length) return;
    const fresh = await fetchElements(ids);
    const alive = new Set(fresh.map((e) => e.id));
    // Another process's write is not the curator's action: no undo step.
    graphModel.quietly(() => {
      for (const id of ids) if (!alive.has(id)) graphModel.remove(id);
      graphModel.add(fresh);
    });
  } catch {
    // Best effort: the next change retries.
  }
}

import { LARGE_MEMORY, seedCommands, type Primer } from './primer';

export type { ConceptNode, JsonObject };

/**
 * The first picture: the memory itself — the members of the largest
 * domains but CoreSchema (by type, bounded) — then instances of those
 * domains' key concept types, with the links among them.
 */
export async function seedGraph() {
  performance.mark('kip:seed');
  const [{ result }, info] = await Promise.all([query('DESCRIBE PRIMER'), api().call('info', null)]);
  performance.mark('kip:primer');
  // A large memory starts with its shape, not a few dozen unconnected dots.
  if (info.concepts > LARGE_MEMORY) {
    app.schemaMap = true;
    return;
  }
  const commands = seedCommands((result ?? {}) as Primer);
  if (!commands.length) return;
  const r = await api().execute({ commands });
  performance.mark('kip:found');
  const found = collectElements((r.result ?? []) as Json);
  if (!found.size || graphModel.size > 0) return;
  await addToGraph(found.values());
  performance.mark('kip:added');
  await connectVisible([...found.keys()]);
  performance.mark('kip:connected');
  const w = window as unknown as { kipExplorer?: Record<string, unknown> };
  requestAnimationFrame(() =>
    requestAnimationFrame(() => {
      performance.mark('kip:painted');
      w.kipExplorer = { ...(w.kipExplorer ?? {}), firstGraphPaintMs: Math.round(performance.now()) };
    }),
  );
}
