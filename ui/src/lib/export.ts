// Exports: a result table as CSV or tab-separated text for the clipboard,
// the view as a scene (nodes, positions, pins, styles) to reopen, and an
// SVG drawn as PNG (the graph's picture is graph/export-image.ts's). The
// text builders are pure; `download` and `svgToPng` touch the DOM.
import { isConcept, isProposition, type Json, type Table } from './kip';
import type { StyleRule } from './graph/styling';

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
