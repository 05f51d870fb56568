// The shortest-path search between two selected concepts: its options (as
// the paths form leaves them between searches) and the search itself, by
// the engine, its paths then drawn marked in the graph.
import { isElement, type Json } from '../kip';
import { addToGraph, api, app, graphModel, reportError, toast } from '../state.svelte';

/** The link every concept has to its domain. */
export const DOMAIN_LINK = 'belongs_to_domain';

export class PathSearch {
  /** At most this many links. */
  hops = $state(4);
  /** Only over these predicates (none: all). */
  predicates = $state<string[]>([]);
  directed = $state(false);
  /**
   * Whether paths may go through a domain (`belongs_to_domain`): off by
   * default, as every concept belongs to one and a path through the hub
   * says nothing about how two concepts relate.
   */
  viaDomains = $state(false);
  busy = $state(false);

  /** The predicates the search may walk (undefined: all). */
  private walked(): string[] | undefined {
    if (this.predicates.length) return this.predicates;
    if (this.viaDomains) return undefined;
    const all = app.predicates.map((p) => p.name).filter((p) => p !== DOMAIN_LINK);
    return all.length ? all : undefined;
  }

  /**
   * Finds the shortest paths from `from` to `to` and marks them; `answered`
   * runs once the engine has answered, `found` with the paths' nodes (the
   * view frames them).
   */
  async find(from: string, to: string, answered: () => void, found: (nodes: string[]) => void = () => {}) {
    this.busy = true;
    try {
      const r = await api().paths({
        from: { id: from },
        to: { id: to },
        max_hops: this.hops,
        predicates: this.walked(),
        directed: this.directed || undefined,
      });
      answered();
      if (!r.paths.length) {
        graphModel.showPaths();
        toast('info', `No path of at most ${this.hops} links${this.predicates.length ? ` over ${this.predicates.join(', ')}` : this.viaDomains ? '' : ` outside ${DOMAIN_LINK}`}.`, r.truncated ? 'The search stopped at its budget; try fewer hops or predicates.' : undefined);
        return;
      }
      await addToGraph((r.elements as Json[]).filter(isElement));
      const nodes = [...new Set(r.paths.flatMap((p) => p.nodes))];
      graphModel.showPaths(nodes, r.paths.flatMap((p) => p.links));
      found(nodes.filter((n) => graphModel.graph.hasNode(n)));
      toast('success', `${r.paths.length}${r.truncated ? '+' : ''} shortest ${r.paths.length === 1 ? 'path' : 'paths'} of ${r.hops} ${r.hops === 1 ? 'link' : 'links'}.`);
    } catch (e) {
      reportError(e, 'Finding paths failed');
    } finally {
      this.busy = false;
    }
  }
}
