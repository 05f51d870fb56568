// Colour scales for "colour by value" styling rules: perceptual multi-hue
// ramps (matplotlib's viridis, plasma and cividis, sampled at nine stops)
// whose lightness and hue both change along the scale, so 0.4 and 0.95 read
// apart (a single-hue lightness ramp does not). Pure.

export type PaletteName = 'viridis' | 'plasma' | 'cividis';

export const PALETTES: Record<PaletteName, { label: string; stops: string[] }> = {
  viridis: { label: 'Viridis (purple → green → yellow)', stops: ['#440154', '#472d7b', '#3b528b', '#2c728e', '#21918c', '#28ae80', '#5ec962', '#addc30', '#fde725'] },
  plasma: { label: 'Plasma (blue → magenta → yellow)', stops: ['#0d0887', '#5302a3', '#8b0aa5', '#b83289', '#db5c68', '#f48849', '#febd2a', '#f0f921', '#f0f921'] },
  cividis: { label: 'Cividis (blue → yellow, colour-blind safe)', stops: ['#00224e', '#123570', '#3b496c', '#575d6d', '#707173', '#8a8779', '#a69d75', '#c4b56c', '#fee838'] },
};

export const isPalette = (v: unknown): v is PaletteName => typeof v === 'string' && v in PALETTES;

/** The colour at `t` (0…1) along a palette. */
export function paletteColor(name: PaletteName, t: number): string {
  const stops = PALETTES[name].stops;
  const x = Math.max(0, Math.min(1, Number.isFinite(t) ? t : 0)) * (stops.length - 1);
  const i = Math.min(stops.length - 2, Math.floor(x));
  return mix(stops[i], stops[i + 1], x - i);
}

/** A CSS linear gradient along a palette (for the scale legend). */
export function paletteGradient(name: PaletteName): string {
  return `linear-gradient(to right, ${PALETTES[name].stops.join(', ')})`;
}

function hex(c: string): [number, number, number] | null {
  const m = /^#([0-9a-f]{6})$/i.exec(c.trim());
  if (!m) return null;
  const n = parseInt(m[1], 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

/** The colour `t` (0…1) of the way from `a` to `b`. */
export function mix(a: string, b: string, t: number): string {
  const x = hex(a);
  const y = hex(b);
  if (!x || !y) return t < 0.5 ? a : b;
  const c = x.map((v, i) => Math.round(v + (y[i] - v) * t));
  return `#${c.map((v) => v.toString(16).padStart(2, '0')).join('')}`;
}
