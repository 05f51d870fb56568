// Imports under way, as the host reports them (the watched folder's
// `progress`, a few updates a second): what the progress bar says. Pure.
import type { ImportProgress } from '../transport/generated/kip-api';

/** Imports shorter than this show no bar: most files land before it. */
export const SHOW_AFTER_MS = 1000;

const PHASES: Record<string, string> = { parsing: 'Reading', validating: 'Checking', applying: 'Writing' };

/** `12.4 MB` — decimal units, one decimal from a megabyte on. */
export function formatBytes(n: number): string {
  if (n < 1000) return `${n} B`;
  if (n < 1_000_000) return `${Math.round(n / 1000)} kB`;
  if (n < 1_000_000_000) return `${(n / 1_000_000).toFixed(1)} MB`;
  return `${(n / 1_000_000_000).toFixed(2)} GB`;
}

/** Whether an import has run long enough to show its bar. */
export function shown(p: ImportProgress | undefined): p is ImportProgress {
  return !!p && p.elapsed_ms >= SHOW_AFTER_MS;
}

/**
 * The share of the bar for checking; writing fills the rest. Writing is
 * most of a large import's time (measured on a debug build: ~1.5 s of
 * checking, ~14 s of writing for 20,000 concepts).
 */
export const CHECKING_SHARE = 0.3;

/**
 * The bar's fill, 0–1: checking moves through the file's bytes, writing
 * through the items written. Reading and parsing report no steps in
 * between, so they show an empty bar.
 */
export function fraction(p: ImportProgress): number {
  // A capsule too large to hold is checked and written part by part: no
  // item total, the bytes taken in fill the whole bar.
  if (p.phase === 'applying' && p.total_items === 0 && p.total_bytes > 0) return Math.min(1, p.bytes / p.total_bytes);
  if (p.phase === 'applying') {
    const items = p.total_items > 0 ? Math.min(1, p.items / p.total_items) : 0;
    return CHECKING_SHARE + (1 - CHECKING_SHARE) * items;
  }
  if (p.phase === 'validating') return p.total_bytes > 0 ? CHECKING_SHARE * Math.min(1, p.bytes / p.total_bytes) : 0;
  return 0;
}

/** "Checking · 4.2 MB of 12.4 MB · 10,000 of 30,000 items". */
export function describe(p: ImportProgress): string {
  const n = (x: number) => x.toLocaleString('en-US');
  const phase = PHASES[p.phase] ?? p.phase;
  const parts = [phase, `${formatBytes(p.bytes)} of ${formatBytes(p.total_bytes)}`];
  if (p.total_items > 0) parts.push(`${n(p.items)} of ${n(p.total_items)} items`);
  return parts.join(' · ');
}
