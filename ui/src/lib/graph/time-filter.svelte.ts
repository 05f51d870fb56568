// The graph's time filter, as the legend's Time section sets it: a window
// over the shown elements' own `_updated_at` or `_created_at` stamps (what
// falls outside is hidden), and "what changed since…", which marks the
// shown elements stamped since then. The window's arithmetic is
// time-window.ts's, shared with the Primer.
import { formatTime } from '../time';
import { api, app, graphModel, reportError, toast } from '../state.svelte';
import { changedIds, sinceMoment, stamps as distinctStamps, stampWindow, type TimeField } from '../time-window';

export class TimeFilter {
  field = $state<TimeField>('_updated_at');
  /** The sliders: indexes into `stamps`. */
  from = $state(0);
  to = $state(Number.MAX_SAFE_INTEGER);
  /** The "what changed since…" choice ('' for none). */
  since = $state('');
  /** Whose changes "what changed since…" marks ('' for anyone's): read from the trace. */
  by = $state('');
  /** The shown elements' distinct stamps on `field`, sorted. */
  stamps = $derived.by(() => (void app.graphVersion, distinctStamps([...graphModel.elements.values()].map((e) => e.metadata), this.field)));

  /** Puts the sliders' window on the graph; true when it set a new window (the view frames what it leaves). */
  apply(): boolean {
    const w = stampWindow(this.stamps, this.from, this.to, this.field);
    if (!w) {
      if (graphModel.timeWindow) graphModel.setTimeWindow(null);
      return false;
    }
    const cur = graphModel.timeWindow;
    if (!cur || cur.field !== w.field || cur.from !== w.from || cur.to !== w.to) {
      graphModel.setTimeWindow(w);
      return true;
    }
    return false;
  }

  /** The sliders back to every stamp (another field has other stamps). */
  reset() {
    this.from = 0;
    this.to = Number.MAX_SAFE_INTEGER;
  }

  /** The choice as the select shows it: none once the marks are cleared (issue 33 §13). */
  get shownSince(): string {
    void app.graphVersion;
    return graphModel.marked.size ? this.since : '';
  }

  /**
   * Marks every shown element stamped at or after the chosen moment on the
   * chosen field; with an originator chosen (`by`), the shown elements that
   * originator's writes since then touched, as the trace records them.
   */
  async changedSince(value: string) {
    this.since = value;
    if (!value) {
      graphModel.mark([]);
      return;
    }
    const since = sinceMoment(value).toISOString();
    let ids: string[];
    if (this.by) {
      try {
        const page = await api().call('trace_list', { originator: this.by, type: 'TRACE', since: since.replace(/\.\d+Z$/, 'Z'), limit: 1000 });
        const touched = new Set(page.entries.flatMap((e) => (Array.isArray(e.data?.elements) ? (e.data.elements as string[]) : [])));
        ids = [...touched].filter((id) => graphModel.graph.hasNode(id));
      } catch (e) {
        reportError(e, 'Reading the trace failed');
        return;
      }
    } else {
      ids = changedIds(graphModel.elements.values(), this.field, since, (id) => graphModel.graph.hasNode(id));
    }
    graphModel.mark(ids);
    const what = this.by ? `changed by ${this.by}` : this.field === '_created_at' ? 'created' : 'changed';
    toast('info', `${ids.length} shown ${ids.length === 1 ? 'node' : 'nodes'} ${what} since ${formatTime(since)}.`);
  }

  /** The originators the trace names lately, for the `by` choice. */
  async originators(): Promise<string[]> {
    try {
      const page = await api().call('trace_list', { type: 'TRACE', limit: 500 });
      return [...new Set(page.entries.map((e) => e.originator))].sort();
    } catch {
      return [];
    }
  }
}
