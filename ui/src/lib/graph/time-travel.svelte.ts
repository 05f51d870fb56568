// Time travel on the graph (issue 31 §6): a slider over the trace's writes,
// oldest kept … now, that shows the graph as it was after the chosen write.
//
// The engine does the reconstruction: `diff` from the chosen entry to now
// lists what was added, changed and removed since, each with its state
// then (`before`). Replaying it backwards over the graph as it is now gives
// the graph then: what was added since is taken out, what changed gets its
// state back, what was removed since comes back (links only where both
// ends are shown). The present graph is kept and put back on "Back to
// now". The inspector reads the element then through `neighbourhood`'s
// `as_of`, which the engine answers from a rewound copy.
import { api, graphModel, reportError } from '../state.svelte';
import type { Diff, DiffElement, TraceEntry } from '../../transport/generated/kip-api';
import type { Element, JsonObject } from '../kip';
import type { GraphSnapshot } from './model';

/** How many of the newest writes the slider spans at most. */
export const TIMELINE_WRITES = 1000;
/** Removed concepts brought back unasked (beyond these, only the ends of links to shown nodes). */
const MAX_RETURNING = 100;

export interface Write {
  id: string;
  at: string;
  command: string;
}

function isWrite(e: TraceEntry): boolean {
  const changes = (e.data as { changes?: unknown[] } | undefined)?.changes;
  return e.type === 'TRACE' && Array.isArray(changes) && changes.length > 0;
}

/** An element as the graph draws it, from a diff element's state then. */
export function elementThen(d: DiffElement): Element | null {
  const s = d.before;
  if (!s) return null;
  if (d.kind === 'concept') {
    return { _type: 'ConceptNode', id: d.id, type: d.type ?? '', name: d.name ?? '', attributes: s.attributes as JsonObject, metadata: s.metadata as JsonObject };
  }
  const subject = s.subject ?? d.subject?.id;
  const object = s.object ?? d.object?.id;
  if (!subject || !object) return null;
  return { _type: 'PropositionLink', id: d.id, subject, predicate: d.type ?? '', object, attributes: s.attributes as JsonObject, metadata: s.metadata as JsonObject };
}

export class TimeTravel {
  /** The writes the slider steps through, oldest first. */
  writes = $state<Write[]>([]);
  /** The slider's place: an index into `writes`, or `writes.length` for now. */
  index = $state(0);
  /** The entry the graph stands at while travelling (null: now). */
  point = $state<string | null>(null);
  /** When that entry was written. */
  at = $state<string | null>(null);
  /** What changed since the point (the last diff), for the banner. */
  since = $state<Diff | null>(null);
  busy = $state(false);
  /** Whether the timeline reaches back to the first write (else retention dropped older ones). */
  complete = $state(true);
  private present: GraphSnapshot | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private asked = 0;

  /** Reads the timeline: the newest writes kept in the trace. */
  async load() {
    try {
      const page = await api().call('trace_list', { type: 'TRACE', limit: TIMELINE_WRITES });
      const writes = page.entries.filter(isWrite).map((e) => ({ id: e.id, at: e.at, command: String((e.data as { command?: string })?.command ?? '') }));
      this.writes = writes.reverse();
      this.complete = !page.next_before;
      if (!this.point) this.index = this.writes.length;
    } catch (e) {
      reportError(e, 'Reading the trace for the time slider failed');
    }
  }

  /** The slider moved: travel there after a short pause (moving on cancels it). */
  slide(index: number) {
    this.index = index;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.travel(index), 250);
  }

  /** Shows the graph as it was after write `index` (`writes.length`: now). */
  async travel(index: number) {
    if (index >= this.writes.length) return this.back();
    const write = this.writes[index];
    const asked = ++this.asked;
    this.busy = true;
    try {
      const diff = await api().call('diff', { since: write.id, limit: 2000 });
      if (asked !== this.asked) return;
      this.present ??= graphModel.snapshot();
      this.replay(diff);
      this.point = write.id;
      this.at = write.at;
      this.index = index;
      this.since = diff;
    } catch (e) {
      reportError(e, 'Travelling back in time failed');
    } finally {
      if (asked === this.asked) this.busy = false;
    }
  }

  /** The present graph with `diff` undone over it. */
  private replay(diff: Diff) {
    const present = this.present;
    if (!present) return;
    graphModel.quietly(() => graphModel.restore(present));
    const shown = new Set(graphModel.elements.keys());
    const gone = diff.added.map((d) => d.id).filter((id) => shown.has(id));
    const back: Element[] = [];
    for (const d of diff.changed) {
      const e = elementThen(d);
      if (e && shown.has(d.id)) back.push(e);
    }
    const removed = diff.removed.map(elementThen).filter((e): e is Element => !!e);
    const links = removed.filter((e) => e._type === 'PropositionLink');
    const ends = new Set(links.flatMap((l) => (l._type === 'PropositionLink' && (shown.has(l.subject) || shown.has(l.object)) ? [l.subject, l.object] : [])));
    const concepts = removed.filter((e) => e._type === 'ConceptNode');
    for (const c of concepts) if (ends.has(c.id) || concepts.length <= MAX_RETURNING) back.push(c);
    const drawn = new Set([...shown, ...back.map((e) => e.id)].filter((id) => !gone.includes(id)));
    for (const l of links) if (l._type === 'PropositionLink' && drawn.has(l.subject) && drawn.has(l.object)) back.push(l);
    graphModel.quietly(() => {
      graphModel.removeAll(gone);
      graphModel.add(back);
    });
    graphModel.mark([...diff.changed, ...diff.removed].map((d) => d.id).filter((id) => drawn.has(id)));
  }

  /** Back to now: the present graph as it was before travelling. */
  back() {
    clearTimeout(this.timer);
    this.asked++;
    if (this.present) {
      const present = this.present;
      graphModel.quietly(() => graphModel.restore(present));
      graphModel.mark([]);
    }
    this.present = null;
    this.point = null;
    this.at = null;
    this.since = null;
    this.busy = false;
    this.index = this.writes.length;
  }
}

/** The one time travel of the app: the graph's slider and the inspector read it. */
export const timeTravel = new TimeTravel();
