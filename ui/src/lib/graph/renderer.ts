// Two renderers of the same graphology graph behind one interface: sigma.js
// (WebGL) when the platform has WebGL, and a plain canvas renderer when it
// does not (headless browsers without a GPU, locked-down webviews). Both
// support select, double-click to expand, drag to pin, pan, zoom and fit.
//
// This module picks one; the renderers are sigma-renderer.ts and
// canvas-renderer.ts, their shared interface render-shared.ts.
import type { KipGraph } from './model';
import { NO_DECORATIONS, type Decorations, type GraphRenderer, type RendererEvents, type Theme } from './render-shared';
import { SigmaRenderer } from './sigma-renderer';
import { CanvasRenderer } from './canvas-renderer';

export { LABEL_FONT } from './render-shared';
export type { Decorations, GraphRenderer, Overlays, RendererEvents, Theme } from './render-shared';

/** The probe's answer: it creates a WebGL context, so it runs once. */
let probed: { ok: boolean; renderer: string } | null = null;

/**
 * Whether WebGL is there and drawn by a GPU. A software rasteriser
 * (SwiftShader in GPU-less Chromium, llvmpipe under Xvfb) draws sigma's
 * WebGL an order of magnitude slower than our canvas renderer draws the
 * same graph, so it counts as unavailable. WebKitGTK masks the string
 * ("Apple GPU"), so there software WebGL counts as a GPU; there it is also
 * faster than WebKit's canvas 2D (BENCHMARKS.md, "In the desktop window").
 */
export function webglAvailable(): { ok: boolean; renderer: string } {
  probed ??= probeWebgl();
  return probed;
}

function probeWebgl(): { ok: boolean; renderer: string } {
  try {
    const canvas = document.createElement('canvas');
    const gl = (canvas.getContext('webgl2') ?? canvas.getContext('webgl')) as WebGLRenderingContext | null;
    if (!gl) return { ok: false, renderer: 'none' };
    const info = gl.getExtension('WEBGL_debug_renderer_info');
    const renderer = String(info ? gl.getParameter(info.UNMASKED_RENDERER_WEBGL) : gl.getParameter(gl.RENDERER));
    gl.getExtension('WEBGL_lose_context')?.loseContext();
    return { ok: !/swiftshader|llvmpipe|softpipe|software/i.test(renderer), renderer };
  } catch {
    return { ok: false, renderer: 'none' };
  }
}

export function createRenderer(
  graph: KipGraph,
  container: HTMLElement,
  events: RendererEvents,
  theme: Theme,
  choice: 'auto' | 'webgl' | 'canvas' = 'auto',
  decor: Decorations = NO_DECORATIONS,
): GraphRenderer {
  if (choice === 'webgl' || (choice === 'auto' && webglAvailable().ok)) {
    try {
      return new SigmaRenderer(graph, container, events, theme, decor);
    } catch (e) {
      console.warn('WebGL renderer failed, falling back to canvas', e);
    }
  }
  return new CanvasRenderer(graph, container, events, theme, decor);
}
