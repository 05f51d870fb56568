// The graph view's multiple selection (shift-click, lasso; the single
// selection is `app.selection`) and what the toolbar and the keys do to
// what is selected: expand, pin, hide, remove; and undo and redo, which
// keep the selection to what is still there.
import { isElement, type Element, type Json } from '../kip';
import { addToGraph, api, app, graphModel, reportError, select, toast } from '../state.svelte';

export class MultiSelection {
  ids = $state<string[]>([]);
  set = $derived(new Set(this.ids));

  /** What the actions apply to: the multiple selection, else the selected node. */
  targets(): string[] {
    if (this.ids.length) return this.ids.filter((id) => graphModel.graph.hasNode(id));
    return app.selection && graphModel.graph.hasNode(app.selection) ? [app.selection] : [];
  }

  hide() {
    const ids = this.targets();
    if (!ids.length) return;
    graphModel.hideAll(ids);
    this.ids = [];
    select(null);
  }

  remove() {
    const ids = this.targets();
    if (!ids.length) {
      // A selected link (an edge) is removed on its own.
      if (app.selection && graphModel.graph.hasEdge(app.selection)) graphModel.remove(app.selection);
      select(null);
      return;
    }
    graphModel.removeAll(ids);
    this.ids = [];
    select(null);
  }

  pin() {
    graphModel.togglePins(this.targets());
  }

  /** Adds every link of every selected node (bounded per node), as one undo step; one node opens `pick` instead. */
  async expand(pick: (id: string) => void) {
    const ids = this.targets();
    if (ids.length === 1) {
      pick(ids[0]);
      return;
    }
    try {
      const r = await api().execute({
        commands: ids.slice(0, 100).flatMap((id) => [
          { command: 'FIND(?l) WHERE { ?l (?s, ?p, ?o) ?s {id: :id} } LIMIT 50', parameters: { id } },
          { command: 'FIND(?l) WHERE { ?l (?s, ?p, ?o) ?o {id: :id} } LIMIT 50', parameters: { id } },
        ]),
      });
      const links: Element[] = [];
      for (const item of (r.result ?? []) as { result?: Json }[]) for (const e of Array.isArray(item?.result) ? item.result : []) if (isElement(e)) links.push(e);
      const added = await addToGraph(links);
      toast('info', `Expanded ${ids.length} nodes: ${added.length} new elements.`);
    } catch (e) {
      reportError(e, 'Expanding failed');
    }
  }

  undo() {
    if (graphModel.undo()) {
      this.ids = this.ids.filter((id) => graphModel.graph.hasNode(id));
      if (app.selection && !graphModel.graph.hasNode(app.selection) && !graphModel.graph.hasEdge(app.selection)) select(null);
    }
  }

  redo() {
    graphModel.redo();
  }
}
