// Shift-click and shift-drag (the lasso) over the graph: the view's own,
// caught before either renderer sees the pointer (a prevented pointerdown
// sends no mouse events). A shift-click toggles the nearest node in the
// multiple selection; a lasso adds the nodes drawn inside it.
import { app, graphModel } from '../state.svelte';
import type { MultiSelection } from './multi-selection.svelte';
import { lassoed, nearest, toggle, type Point } from './selection';

/** A shown node where it is drawn (null: not drawn), with its radius. */
export interface DrawnNode {
  id: string;
  at: Point | null;
  r: number;
}

export class Lasso {
  /** The lasso being drawn, in the container's pixels; null when none is. */
  points = $state<Point[] | null>(null);
  private start: Point | null = null;
  // The click that ends a shift-click or a lasso is the view's too: WebKit
  // (the desktop window) delivers it to the renderer even though the
  // pointerdown was prevented, where it would select one node instead.
  private swallowClick = false;

  constructor(
    private container: () => HTMLElement | undefined,
    private selection: MultiSelection,
    private drawn: () => DrawnNode[],
  ) {}

  private local(e: PointerEvent): Point {
    const r = this.container()!.getBoundingClientRect();
    return { x: e.clientX - r.left, y: e.clientY - r.top };
  }

  onClickCapture = (e: MouseEvent) => {
    if (!this.swallowClick) return;
    this.swallowClick = false;
    e.stopPropagation();
    e.preventDefault();
  };

  onPointerDown = (e: PointerEvent) => {
    this.swallowClick = false;
    const container = this.container();
    if (!e.shiftKey || e.button !== 0 || !container) return;
    e.preventDefault();
    e.stopPropagation();
    this.start = this.local(e);
    this.points = [this.start];
    container.setPointerCapture(e.pointerId);
  };

  onPointerMove = (e: PointerEvent) => {
    if (!this.points) return;
    e.stopPropagation();
    const p = this.local(e);
    const last = this.points[this.points.length - 1];
    if (Math.hypot(p.x - last.x, p.y - last.y) > 3) this.points = [...this.points, p];
  };

  onPointerUp = (e: PointerEvent) => {
    const lasso = this.points;
    const start = this.start;
    if (!lasso || !start) return;
    e.stopPropagation();
    const p = this.local(e);
    const multi = this.selection.ids;
    const base = multi.length ? multi : app.selection && graphModel.graph.hasNode(app.selection) ? [app.selection] : [];
    if (lasso.length < 3 || Math.hypot(p.x - start.x, p.y - start.y) < 4 && lasso.length < 4) {
      const hit = nearest(this.drawn(), p);
      if (hit) this.selection.ids = toggle(base, hit);
    } else {
      const inside = lassoed(this.drawn(), lasso);
      this.selection.ids = [...new Set([...base, ...inside])];
    }
    this.points = null;
    this.start = null;
    this.swallowClick = true;
    // The single selection (and the inspector) stays as it is: opening or
    // closing the inspector would move the view under the next shift-click.
  };
}
