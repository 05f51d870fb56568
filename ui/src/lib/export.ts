// Exports: the graph view as SVG (and PNG, drawn from the SVG), a result
// table as CSV or tab-separated text for the clipboard, and the view as a
// scene (nodes, positions, pins, styles) to reopen. The text builders are
// pure; `download` and `svgToPng` touch the DOM.
import { isConcept, isProposition, type Json, type Table } from './kip';
import type { StyleRule } from './graph/styling';

export interface SvgNode {
  x: number;
  y: number;
  r: number;
  color: string;
  label: string;
  kind: 'concept' | 'link';
  ring?: string;
}

export interface SvgEdge {
  x1: number;
  y1: number;
  x2: number;
  y2: number;
  color: string;
  width: number;
  label?: string;
  arrow: boolean;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const n = (v: number) => (Math.round(v * 10) / 10).toString();

/** The view as a standalone SVG document, in view (CSS pixel) coordinates. */
export function graphSvg(
  nodes: SvgNode[],
  edges: SvgEdge[],
  opts: { width: number; height: number; background: string; label: string; edgeLabel: string; font: string },
): string {
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${n(opts.width)}" height="${n(opts.height)}" viewBox="0 0 ${n(opts.width)} ${n(opts.height)}" font-family="${esc(opts.font)}">`);
  out.push(`<rect width="100%" height="100%" fill="${esc(opts.background)}"/>`);
  out.push('<g class="links">');
  for (const e of edges) {
    out.push(`<line x1="${n(e.x1)}" y1="${n(e.y1)}" x2="${n(e.x2)}" y2="${n(e.y2)}" stroke="${esc(e.color)}" stroke-width="${n(e.width)}" stroke-linecap="round"/>`);
    if (e.arrow) {
      const ang = Math.atan2(e.y2 - e.y1, e.x2 - e.x1);
      const p = (d: number, a: number) => `${n(e.x2 - Math.cos(ang + a) * d)},${n(e.y2 - Math.sin(ang + a) * d)}`;
      out.push(`<polygon points="${n(e.x2)},${n(e.y2)} ${p(8, 0.4)} ${p(8, -0.4)}" fill="${esc(e.color)}"/>`);
    }
    if (e.label) {
      let deg = (Math.atan2(e.y2 - e.y1, e.x2 - e.x1) * 180) / Math.PI;
      if (deg > 90 || deg < -90) deg += 180;
      const cx = (e.x1 + e.x2) / 2;
      const cy = (e.y1 + e.y2) / 2;
      out.push(`<text x="${n(cx)}" y="${n(cy - 5)}" transform="rotate(${n(deg)} ${n(cx)} ${n(cy)})" text-anchor="middle" font-size="11" fill="${esc(opts.edgeLabel)}">${esc(e.label)}</text>`);
    }
  }
  out.push('</g><g class="nodes">');
  for (const v of nodes) {
    if (v.ring) out.push(`<circle cx="${n(v.x)}" cy="${n(v.y)}" r="${n(v.r + 4)}" fill="none" stroke="${esc(v.ring)}" stroke-width="2.5"/>`);
    if (v.kind === 'link') {
      const d = v.r * 1.3;
      out.push(`<polygon points="${n(v.x)},${n(v.y - d)} ${n(v.x + d)},${n(v.y)} ${n(v.x)},${n(v.y + d)} ${n(v.x - d)},${n(v.y)}" fill="${esc(v.color)}"/>`);
    } else out.push(`<circle cx="${n(v.x)}" cy="${n(v.y)}" r="${n(v.r)}" fill="${esc(v.color)}"/>`);
  }
  out.push('</g><g class="labels" font-size="13" font-weight="500">');
  for (const v of nodes) {
    if (v.label) out.push(`<text x="${n(v.x + v.r + 4)}" y="${n(v.y + 4)}" fill="${esc(opts.label)}">${esc(v.label)}</text>`);
  }
  out.push('</g></svg>');
  return out.join('\n');
}

/** A cell as text: a concept by its name, a link by its predicate, other values as JSON. */
export function cellText(cell: Json | undefined): string {
  if (cell === null || cell === undefined) return '';
  if (isConcept(cell)) return cell.name;
  if (isProposition(cell)) return cell.predicate;
  if (typeof cell === 'string') return cell;
  return typeof cell === 'object' ? JSON.stringify(cell) : String(cell);
}

/** RFC 4180 CSV: a header row, then one row per result row; CRLF line ends. */
export function tableCsv(table: Table): string {
  const quote = (s: string) => (/[",\r\n]/.test(s) || /^\s|\s$/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  const lines = [table.columns.map(quote).join(',')];
  for (const row of table.rows) lines.push(row.map((c) => quote(cellText(c))).join(','));
  return lines.join('\r\n') + '\r\n';
}

/** Tab-separated text (what a spreadsheet takes from the clipboard): tabs and line breaks inside cells become spaces. */
export function tableTsv(table: Table): string {
  const clean = (s: string) => s.replace(/[\t\r\n]+/g, ' ');
  return [table.columns.map(clean).join('\t'), ...table.rows.map((r) => r.map((c) => clean(cellText(c))).join('\t'))].join('\n');
}

/** A saved view: which elements, where, pinned or hidden, and the styles it was drawn with. */
export interface Scene {
  name: string;
  at: string;
  nodes: { id: string; x: number; y: number; pinned?: boolean; hidden?: boolean }[];
  links: string[];
  styles: StyleRule[];
}

/** Scenes read back from a setting, keeping only well-formed ones. */
export function readScenes(value: Json | undefined): Scene[] {
  if (!Array.isArray(value)) return [];
  return value.filter((s): s is Scene & Json => {
    const o = s as unknown as Scene;
    return !!o && typeof o === 'object' && typeof o.name === 'string' && Array.isArray(o.nodes) && Array.isArray(o.links);
  }) as unknown as Scene[];
}

/** Offers `content` as a file download. */
export function download(fileName: string, content: Blob | string, type = 'text/plain;charset=utf-8') {
  const blob = typeof content === 'string' ? new Blob([content], { type }) : content;
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  a.style.display = 'none';
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 5000);
}

/** Draws an SVG document onto a canvas and returns it as PNG. */
export async function svgToPng(svg: string, width: number, height: number, scale = 2): Promise<Blob> {
  const url = URL.createObjectURL(new Blob([svg], { type: 'image/svg+xml' }));
  try {
    const img = new Image();
    await new Promise<void>((resolve, reject) => {
      img.onload = () => resolve();
      img.onerror = () => reject(new Error('the SVG could not be drawn'));
      img.src = url;
    });
    const canvas = document.createElement('canvas');
    canvas.width = Math.round(width * scale);
    canvas.height = Math.round(height * scale);
    const ctx = canvas.getContext('2d');
    if (!ctx) throw new Error('no 2D canvas');
    ctx.scale(scale, scale);
    ctx.drawImage(img, 0, 0, width, height);
    return await new Promise<Blob>((resolve, reject) => canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('no PNG'))), 'image/png'));
  } finally {
    URL.revokeObjectURL(url);
  }
}
