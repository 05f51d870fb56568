// What the graph view reads from the page: the theme's graph colours (CSS
// variables on the root element), and the floating panels' boxes as the
// overlays the renderer keeps nodes and labels clear of.
import type { Overlays, Theme } from './renderer';

/** The graph colours of the theme in force (system or chosen). */
export function readTheme(): Theme {
  const css = getComputedStyle(document.documentElement);
  const v = (name: string) => css.getPropertyValue(name).trim();
  return { label: v('--graph-label'), edgeLabel: v('--graph-edge-label'), accent: v('--accent'), dim: v('--graph-dim'), background: v('--graph-bg') };
}

/** The view's floating panels (absent ones: not shown). */
export interface Panels {
  toolbar?: HTMLElement | null;
  legend?: HTMLElement | null;
  hint?: HTMLElement | null;
  /** The time-travel bar under the toolbar (with its banner when travelling). */
  travel?: HTMLElement | null;
}

/**
 * The floating toolbar and legend, as insets fitting keeps nodes out of
 * and boxes labels avoid. The toolbar covers a strip along the top; the
 * open legend a column on the left, the folded one a corner at the bottom;
 * the hint line a strip along the bottom.
 */
export function measureOverlays(container: HTMLElement, { toolbar, legend, hint, travel }: Panels): Overlays {
  const c = container.getBoundingClientRect();
  const insets = { top: 0, right: 0, bottom: 0, left: 0 };
  const rects = [];
  for (const el of [toolbar, legend, travel]) {
    if (!el) continue;
    const r = el.getBoundingClientRect();
    rects.push({ x: r.left - c.left, y: r.top - c.top, w: r.width, h: r.height });
  }
  if (toolbar) insets.top = toolbar.getBoundingClientRect().bottom - c.top + 4;
  if (travel) insets.top = Math.max(insets.top, travel.getBoundingClientRect().bottom - c.top + 4);
  if (legend) {
    const r = legend.getBoundingClientRect();
    if (r.height > c.height * 0.35) insets.left = r.right - c.left + 4;
    else insets.bottom = c.bottom - r.top + 4;
  }
  if (hint) insets.bottom = Math.max(insets.bottom, c.bottom - hint.getBoundingClientRect().top + 4);
  return { insets, rects };
}
