// Force-directed layout (ForceAtlas2) in a web worker, so the main thread
// keeps drawing and answering input while nodes settle. Each run lasts a
// bounded time that grows with the graph, then stops by itself.
import FA2Layout from 'graphology-layout-forceatlas2/worker';
import forceAtlas2 from 'graphology-layout-forceatlas2';
import type { KipGraph } from './model';

export class LayoutRunner {
  private layout: FA2Layout | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private listeners = new Set<(running: boolean) => void>();
  /** Nodes held still for a local run, to let go when it stops. */
  private held: string[] = [];
  running = false;

  constructor(private readonly graph: KipGraph) {}

  onRunning(listener: (running: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private set(running: boolean) {
    this.running = running;
    for (const l of this.listeners) l(running);
  }

  /** Runs the layout for a while (longer for larger graphs). */
  run(ms?: number) {
    if (this.graph.order < 2) return;
    this.stop();
    this.start(ms);
  }

  private start(ms?: number) {
    const order = this.graph.order;
    const inferred = forceAtlas2.inferSettings(this.graph);
    const settings = {
      ...inferred,
      // Room for labels in small graphs.
      scalingRatio: order < 500 ? Math.max(inferred.scalingRatio ?? 1, 25) : inferred.scalingRatio,
      barnesHutOptimize: order > 1500,
      adjustSizes: order < 2000,
      edgeWeightInfluence: 0.5,
      slowDown: 4,
    };
    this.layout?.kill();
    this.layout = new FA2Layout(this.graph, { settings });
    this.layout.start();
    this.set(true);
    const duration = ms ?? Math.min(6000, 1200 + order * 1.5);
    this.timer = setTimeout(() => this.stop(), duration);
  }

  /**
   * Runs the layout on `moving` only (an expansion's new neighbours): every
   * other node is held still meanwhile, so the graph the curator has read
   * keeps its shape and the new nodes settle around the one expanded.
   */
  runLocal(moving: string[], ms = 900) {
    if (this.graph.order < 2 || !moving.length) return;
    this.stop();
    const free = new Set(moving);
    this.graph.forEachNode((n, a) => {
      if (!free.has(n) && !a.fixed) {
        this.held.push(n);
        this.graph.setNodeAttribute(n, 'fixed', true);
      }
    });
    this.start(ms);
  }

  stop() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.layout) {
      this.layout.kill();
      this.layout = null;
    }
    for (const n of this.held) if (this.graph.hasNode(n)) this.graph.setNodeAttribute(n, 'fixed', false);
    this.held = [];
    if (this.running) this.set(false);
  }

  kill() {
    this.stop();
    this.listeners.clear();
  }
}
