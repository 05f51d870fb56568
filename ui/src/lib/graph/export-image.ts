// The whole graph as a picture (issue 33 §6): every shown node and link,
// not the viewport's crop, at a scale where nodes stand apart; node labels
// placed where they overlap no other label or node (labels.ts's placement,
// the one the canvas renderer uses), the rest left out; a title (the
// nexus, the scene, the time with its zone, the counts) and a legend of
// the types shown in the colours their nodes have, with the scales of the
// colour rules. SVG, and PNG drawn from it; the file is named after the
// scene and the minute.
import { app, graphModel, reportError } from '../state.svelte';
import { svgToPng } from '../export';
import { saveFile } from '../save';
import { formatTime } from '../time';
import { placeLabels, type LabelCandidate, type Rect } from './labels';
import { LABEL_FONT } from './renderer';
import { ranges, scaleColor, scaleRange, describeRule } from './styling';
import { readTheme } from './view-dom';
import { isDimmed, workspace } from './workspace.svelte';

export interface Picture {
  svg: string;
  width: number;
  height: number;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const n = (v: number) => (Math.round(v * 10) / 10).toString();
const overlaps = (a: Rect, b: Rect) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

let measureCtx: CanvasRenderingContext2D | null = null;
/** A text's width in pixels at `px` (weight 500 for node labels). */
function measure(text: string, px: number, weight = '500'): number {
  measureCtx ??= document.createElement('canvas').getContext('2d');
  if (!measureCtx) return text.length * px * 0.6;
  measureCtx.font = `${weight} ${px}px ${LABEL_FONT}`;
  return measureCtx.measureText(text).width;
}

/** The export's title: the nexus (its file name) and the scene, if one is open. */
export function pictureTitle(): string {
  const nexus = app.nexusPath.split(/[\\/]/).filter(Boolean).pop() ?? 'KIP graph';
  return workspace.sceneName ? `${nexus} · ${workspace.sceneName}` : nexus;
}

/** `kip-graph-<scene or nexus>-<YYYYMMDD-HHMM>.<ext>`, in local time. */
export function exportFileName(ext: string, now = new Date()): string {
  const slug = (workspace.sceneName || app.nexusPath.split(/[\\/]/).filter(Boolean).pop() || 'view')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40) || 'view';
  const p = (v: number) => String(v).padStart(2, '0');
  const stamp = `${now.getFullYear()}${p(now.getMonth() + 1)}${p(now.getDate())}-${p(now.getHours())}${p(now.getMinutes())}`;
  return `kip-graph-${slug}-${stamp}.${ext}`;
}

/** The whole shown graph as an SVG document; null when nothing is shown. */
export function graphPicture(now = new Date()): Picture | null {
  const g = graphModel.graph;
  const theme = readTheme();
  const bg = theme.background || '#ffffff';
  const ink = theme.label || '#263045';
  const muted = theme.edgeLabel || '#6b7488';
  const shown = g.filterNodes((_, a) => !a.hidden);
  if (!shown.length) return null;
  let minX = Infinity, maxX = -Infinity, minY = Infinity, maxY = -Infinity;
  for (const id of shown) {
    const a = g.getNodeAttributes(id);
    minX = Math.min(minX, a.x); maxX = Math.max(maxX, a.x);
    minY = Math.min(minY, a.y); maxY = Math.max(maxY, a.y);
  }
  // Nodes about 120 px apart on average, within 800–4000 px.
  const span = Math.min(4000, Math.max(800, 120 * Math.sqrt(shown.length) * 1.4));
  const scale = span / Math.max(maxX - minX, maxY - minY, 1e-6);
  const pad = 48;
  const labelRoom = 180;
  const header = 64;
  const graphW = Math.max((maxX - minX) * scale, 1);
  const graphH = Math.max((maxY - minY) * scale, 1);
  const width = Math.max(640, graphW + pad * 2 + labelRoom);
  // Graph y grows upwards, the picture's downwards.
  const at = (x: number, y: number) => ({ x: pad + (x - minX) * scale, y: header + pad + (maxY - y) * scale });

  const body: string[] = [];
  const pos = new Map<string, { x: number; y: number; r: number }>();
  for (const id of shown) {
    const a = g.getNodeAttributes(id);
    pos.set(id, { ...at(a.x, a.y), r: a.size });
  }
  body.push('<g class="links">');
  const dimmed = isDimmed;
  g.forEachEdge((id, a, s, t) => {
    const p = pos.get(s);
    const q = pos.get(t);
    if (a.hidden || !p || !q) return;
    const color = dimmed(id) ? theme.dim || '#d0d4dc' : a.color;
    body.push(`<line x1="${n(p.x)}" y1="${n(p.y)}" x2="${n(q.x)}" y2="${n(q.y)}" stroke="${esc(color)}" stroke-width="${n(a.size)}" stroke-linecap="round" opacity="0.85"/>`);
    if (a.type === 'arrow') {
      const ang = Math.atan2(q.y - p.y, q.x - p.x);
      const tip = { x: q.x - Math.cos(ang) * q.r, y: q.y - Math.sin(ang) * q.r };
      const w = (d: number, o: number) => `${n(tip.x - Math.cos(ang + o) * d)},${n(tip.y - Math.sin(ang + o) * d)}`;
      body.push(`<polygon points="${n(tip.x)},${n(tip.y)} ${w(8, 0.4)} ${w(8, -0.4)}" fill="${esc(color)}"/>`);
    }
  });
  body.push('</g><g class="nodes">');
  const discs: Rect[] = [];
  for (const id of shown) {
    const a = g.getNodeAttributes(id);
    const v = pos.get(id);
    if (!v) continue;
    discs.push({ x: v.x - v.r, y: v.y - v.r, w: v.r * 2, h: v.r * 2 });
    const color = dimmed(id) ? theme.dim || '#d0d4dc' : a.color;
    if (graphModel.marked.has(id)) body.push(`<circle cx="${n(v.x)}" cy="${n(v.y)}" r="${n(v.r + 4)}" fill="none" stroke="#f08c00" stroke-width="2.5"/>`);
    if (a.kind === 'link') {
      const d = v.r * 1.3;
      body.push(`<polygon points="${n(v.x)},${n(v.y - d)} ${n(v.x + d)},${n(v.y)} ${n(v.x)},${n(v.y + d)} ${n(v.x - d)},${n(v.y)}" fill="${esc(color)}"/>`);
    } else body.push(`<circle cx="${n(v.x)}" cy="${n(v.y)}" r="${n(v.r)}" fill="${esc(color)}"/>`);
  }
  body.push('</g>');

  // Labels by priority (degree, then size) where they overlap nothing.
  const candidates: LabelCandidate[] = [];
  for (const id of shown) {
    const a = g.getNodeAttributes(id);
    const v = pos.get(id);
    if (!v || !a.label || dimmed(id)) continue;
    candidates.push({ id, x: v.x, y: v.y, r: v.r, width: measure(a.label, 13), height: 16, priority: g.degree(id) * 1000 + a.size });
  }
  const height0 = header + pad * 2 + graphH;
  const placed = placeLabels(candidates, { width, height: height0 }, [{ x: 0, y: 0, w: width, h: header }], 5000, discs);
  body.push(`<g class="labels" font-size="13" font-weight="500" fill="${esc(ink)}">`);
  const taken: Rect[] = [...discs];
  for (const l of placed) {
    taken.push(l.box);
    body.push(`<text x="${n(l.box.x)}" y="${n(l.box.y + l.box.h / 2 + 4)}">${esc(g.getNodeAttribute(l.id, 'label'))}</text>`);
  }
  body.push('</g>');
  // Link labels, level, on their link's middle, where they overlap nothing either.
  body.push(`<g class="link-labels" font-size="11" fill="${esc(muted)}" text-anchor="middle">`);
  g.forEachEdge((_id, a, s, t) => {
    const p = pos.get(s);
    const q = pos.get(t);
    if (a.hidden || a.anchor || !a.label || !p || !q) return;
    const w = measure(a.label, 11, '400');
    if (Math.hypot(q.x - p.x, q.y - p.y) < w + 2 * (p.r + q.r)) return;
    const box = { x: (p.x + q.x) / 2 - w / 2, y: (p.y + q.y) / 2 - 7, w, h: 14 };
    if (taken.some((o) => overlaps(o, box))) return;
    taken.push(box);
    body.push(`<text x="${n(box.x + w / 2)}" y="${n(box.y + 11)}">${esc(a.label)}</text>`);
  });
  body.push('</g>');

  const legend = legendRows(width, height0, ink, muted);
  const height = height0 + legend.height;
  const types = graphModel.typeCounts().length;
  const links = g.filterEdges((_, a) => !a.hidden && !a.anchor).length;
  const count = (k: number, one: string, many: string) => `${k} ${k === 1 ? one : many}`;
  const subtitle = `${formatTime(now)} · ${count(shown.length, 'node', 'nodes')} · ${count(links, 'link', 'links')} · ${count(types, 'type', 'types')}`;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${n(width)}" height="${n(height)}" viewBox="0 0 ${n(width)} ${n(height)}" font-family="${esc(LABEL_FONT)}">`,
    `<rect width="100%" height="100%" fill="${esc(bg)}"/>`,
    `<text class="title" x="${pad}" y="30" font-size="19" font-weight="600" fill="${esc(ink)}">${esc(pictureTitle())}</text>`,
    `<text class="subtitle" x="${pad}" y="52" font-size="12.5" fill="${esc(muted)}">${esc(subtitle)}</text>`,
    ...body,
    legend.svg,
    '</svg>',
  ];
  return { svg: out.join('\n'), width, height };
}

/** The legend under the graph: one swatch per shown type (the colours its nodes have), then each colour scale with its ends. */
function legendRows(width: number, top: number, ink: string, muted: string): { svg: string; height: number } {
  const types = graphModel.typeCounts().filter((t) => !graphModel.hiddenTypes.has(t.type));
  const seen = ranges(graphModel.styleRules, graphModel.elements.values());
  const scales = graphModel.styleRules.filter((r) => r.scale === 'color');
  if (!types.length && !scales.length) return { svg: '', height: 0 };
  const out: string[] = ['<g class="legend" font-size="12.5">'];
  let x = 48;
  let y = top + 6;
  out.push(`<line x1="48" x2="${n(width - 48)}" y1="${n(y - 6)}" y2="${n(y - 6)}" stroke="${esc(muted)}" stroke-opacity="0.3"/>`);
  y += 16;
  for (const t of types) {
    const text = `${t.type} (${t.count})`;
    const w = 26 + t.colors.slice(0, 3).length * 4 + measure(text, 12.5, '400') + 18;
    if (x + w > width - 48) {
      x = 48;
      y += 22;
    }
    t.colors.slice(0, 3).forEach((c, i) => out.push(`<circle cx="${n(x + 7 + i * 5)}" cy="${n(y - 4)}" r="6" fill="${esc(c)}" stroke="#ffffff" stroke-width="1"/>`));
    out.push(`<text x="${n(x + 20 + Math.min(3, t.colors.length) * 4)}" y="${n(y)}" fill="${esc(ink)}">${esc(text)}</text>`);
    x += w;
  }
  for (const [i, rule] of scales.entries()) {
    const range = scaleRange(rule, seen);
    y += 30;
    const id = `scale${i}`;
    const stops = Array.from({ length: 9 }, (_, k) => `<stop offset="${k / 8}" stop-color="${scaleColor(rule, k / 8)}"/>`).join('');
    out.push(`<defs><linearGradient id="${id}">${stops}</linearGradient></defs>`);
    out.push(`<text x="48" y="${n(y)}" fill="${esc(ink)}">${esc(describeRule(rule))}</text>`);
    const bx = 48 + measure(describeRule(rule), 12.5, '400') + 14;
    out.push(`<text x="${n(bx)}" y="${n(y)}" fill="${esc(muted)}">${esc(range ? String(range[0]) : 'min')}</text>`);
    const gx = bx + 34;
    out.push(`<rect x="${n(gx)}" y="${n(y - 11)}" width="160" height="12" rx="3" fill="url(#${id})"/>`);
    out.push(`<text x="${n(gx + 168)}" y="${n(y)}" fill="${esc(muted)}">${esc(range ? String(range[1]) : 'max')}</text>`);
  }
  out.push('</g>');
  return { svg: out.join('\n'), height: y - top + 20 };
}

/** Saves the whole graph as SVG. */
export async function exportSvg() {
  const p = graphPicture();
  if (!p) return;
  await saveFile(exportFileName('svg'), p.svg, 'image/svg+xml').catch((e) => reportError(e, 'Exporting SVG failed'));
}

/** Saves the whole graph as PNG, drawn from its SVG (twice the size while that stays under 8,000 px a side). */
export async function exportPng() {
  const p = graphPicture();
  if (!p) return;
  try {
    const scale = Math.max(1, Math.min(2, 8000 / Math.max(p.width, p.height)));
    await saveFile(exportFileName('png'), await svgToPng(p.svg, p.width, p.height, scale));
  } catch (e) {
    reportError(e, 'Exporting PNG failed');
  }
}
