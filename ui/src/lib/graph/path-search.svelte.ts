// The shortest-path search between two selected concepts: its options (as
// the paths form leaves them between searches) and the search itself, by
// the engine, its paths then drawn marked in the graph.
import { isElement, type Json } from '../kip';
import { addToGraph, api, graphModel, reportError, toast } from '../state.svelte';

export class PathSearch {
  /** At most this many links. */
  hops = $state(4);
  /** Only over these predicates (none: all). */
  predicates = $state<string[]>([]);
  directed = $state(false);
  busy = $state(false);

  /** Finds the shortest paths from `from` to `to` and marks them; `answered` runs once the engine has answered. */
  async find(from: string, to: string, answered: () => void) {
    this.busy = true;
    try {
      const r = await api().paths({
        from: { id: from },
        to: { id: to },
        max_hops: this.hops,
        predicates: this.predicates.length ? this.predicates : undefined,
        directed: this.directed || undefined,
      });
      answered();
      if (!r.paths.length) {
        graphModel.showPaths();
        toast('info', `No path of at most ${this.hops} links${this.predicates.length ? ` over ${this.predicates.join(', ')}` : ''}.`, r.truncated ? 'The search stopped at its budget; try fewer hops or predicates.' : undefined);
        return;
      }
      await addToGraph((r.elements as Json[]).filter(isElement));
      graphModel.showPaths(r.paths.flatMap((p) => p.nodes), r.paths.flatMap((p) => p.links));
      toast('success', `${r.paths.length}${r.truncated ? '+' : ''} shortest ${r.paths.length === 1 ? 'path' : 'paths'} of ${r.hops} ${r.hops === 1 ? 'link' : 'links'}.`);
    } catch (e) {
      reportError(e, 'Finding paths failed');
    } finally {
      this.busy = false;
    }
  }
}
