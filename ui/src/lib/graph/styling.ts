// Rule-based styling (as Neo4j Bloom's): colour, size and caption of nodes
// and links by concept type, by predicate, or by a property's value or
// range — fixed, or scaled along the property (size by `risk_level`, colour
// by `confidence`). Pure: the graph model applies the rules, the legend
// edits them, and they are kept with the nexus (`ui.styles`).
import type { Element, Json } from '../kip';
import { isConcept } from '../kip';
import { isPalette, mix, paletteColor, type PaletteName } from './palettes';

export { mix };

export interface StyleRule {
  id: string;
  /** What the rule matches: concepts of a type, links of a predicate, or elements with a property. */
  on: 'type' | 'predicate' | 'property';
  /** The type or predicate, or the property's key (an attribute, else a metadata key such as `confidence`). */
  name: string;
  /** Property rules: only elements whose value, as text, is this. */
  equals?: string;
  /** Property rules: the range of numbers matched (or, with `scale`, mapped). */
  min?: number;
  max?: number;
  /** Property rules: concepts only, or links only (default: both). */
  only?: 'nodes' | 'links';
  /** Property rules: map the value onto size or colour instead of matching. */
  scale?: 'size' | 'color';
  /** Colour scales: a perceptual palette (absent: from light grey to `color`, as older rules were kept). */
  palette?: PaletteName;
  color?: string;
  size?: number;
  /** The property whose value becomes the caption (label). */
  caption?: string;
}

export interface Look {
  color: string;
  size: number;
  label: string;
}

/** Sizes a scale maps onto: nodes, and links' widths. */
export const NODE_SIZES: [number, number] = [4, 22];
export const EDGE_SIZES: [number, number] = [0.8, 6];
/** The colour a colour scale starts from (its end is the rule's colour). */
export const SCALE_START = '#d9dee8';
export const SCALE_END = '#d62728';

/** A property of an element: its attributes first, then its metadata; `name` and `type` too. */
export function property(e: Element, key: string): Json | undefined {
  if (key in e.attributes) return e.attributes[key];
  if (key in e.metadata) return e.metadata[key];
  if (key === 'name' && isConcept(e)) return e.name;
  if (key === 'type' && isConcept(e)) return e.type;
  if (key === 'predicate' && !isConcept(e)) return e.predicate;
  return undefined;
}

function asNumber(v: Json | undefined): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return null;
}

function asText(v: Json | undefined): string {
  if (v === undefined || v === null) return '';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** Whether a rule applies to an element (a scale rule applies to every element with a number there). */
export function matches(rule: StyleRule, e: Element): boolean {
  switch (rule.on) {
    case 'type':
      return isConcept(e) && e.type === rule.name;
    case 'predicate':
      return !isConcept(e) && e.predicate === rule.name;
    case 'property': {
      if ((rule.only === 'nodes' && !isConcept(e)) || (rule.only === 'links' && isConcept(e))) return false;
      const v = property(e, rule.name);
      if (v === undefined) return false;
      if (rule.scale) return asNumber(v) !== null;
      if (rule.equals !== undefined && rule.equals !== '' && asText(v) !== rule.equals) return false;
      if (rule.min !== undefined || rule.max !== undefined) {
        const n = asNumber(v);
        if (n === null) return false;
        if (rule.min !== undefined && n < rule.min) return false;
        if (rule.max !== undefined && n > rule.max) return false;
      }
      return true;
    }
  }
}

/** The smallest and largest number each scaled property takes among `elements`. */
export function ranges(rules: StyleRule[], elements: Iterable<Element>): Map<string, [number, number]> {
  const keys = new Set(rules.filter((r) => r.on === 'property' && r.scale).map((r) => r.name));
  const out = new Map<string, [number, number]>();
  if (!keys.size) return out;
  for (const e of elements) {
    for (const key of keys) {
      const n = asNumber(property(e, key));
      if (n === null) continue;
      const r = out.get(key);
      out.set(key, r ? [Math.min(r[0], n), Math.max(r[1], n)] : [n, n]);
    }
  }
  return out;
}

/**
 * An element's look after the rules, in order (a later rule wins, as in
 * CSS). `base` is the look without rules; `edge` picks link sizes.
 */
export function styleOf(e: Element, base: Look, rules: StyleRule[], seen: Map<string, [number, number]>, edge = false): Look {
  const look = { ...base };
  for (const rule of rules) {
    if (!matches(rule, e)) continue;
    if (rule.scale) {
      const n = asNumber(property(e, rule.name)) as number;
      const [lo0, hi0] = seen.get(rule.name) ?? [n, n];
      const lo = rule.min ?? lo0;
      const hi = rule.max ?? hi0;
      const t = hi > lo ? Math.max(0, Math.min(1, (n - lo) / (hi - lo))) : 1;
      if (rule.scale === 'size') {
        const [a, b] = edge ? EDGE_SIZES : NODE_SIZES;
        look.size = a + (b - a) * t;
      } else look.color = scaleColor(rule, t);
    } else {
      if (rule.color) look.color = rule.color;
      if (rule.size !== undefined && rule.size > 0) look.size = rule.size;
    }
    if (rule.caption) {
      const v = property(e, rule.caption);
      if (v !== undefined && v !== null) look.label = asText(v);
    }
  }
  return look;
}

/** The values a scale rule maps from: its own bounds, else what the shown elements take. */
export function scaleRange(rule: StyleRule, seen: Map<string, [number, number]>): [number, number] | null {
  const [lo, hi] = seen.get(rule.name) ?? [undefined, undefined];
  const a = rule.min ?? lo;
  const b = rule.max ?? hi;
  return a === undefined || b === undefined ? null : [a, b];
}

/** A colour scale's colour at `t` (0…1): its palette's, else light grey to the rule's colour. */
export function scaleColor(rule: StyleRule, t: number): string {
  return rule.palette ? paletteColor(rule.palette, t) : mix(SCALE_START, rule.color || SCALE_END, t);
}

/** The rule in words, for the legend: "Drug: colour #e15759", "risk_level → size". */
export function describeRule(rule: StyleRule): string {
  const what =
    rule.on === 'type' ? rule.name
    : rule.on === 'predicate' ? `→ ${rule.name}`
    : rule.scale ? rule.name
    : rule.equals ? `${rule.name} = ${rule.equals}`
    : rule.min !== undefined || rule.max !== undefined ? `${rule.name} in ${rule.min ?? '−∞'}…${rule.max ?? '∞'}`
    : `has ${rule.name}`;
  const scope = rule.on === 'property' && rule.only ? ` (${rule.only})` : '';
  const how: string[] = [];
  if (rule.scale) how.push(`${rule.scale === 'size' ? 'size' : 'colour'} by value${rule.min !== undefined || rule.max !== undefined ? ` (${rule.min ?? 'min'}…${rule.max ?? 'max'})` : ''}`);
  else {
    if (rule.color) how.push(`colour ${rule.color}`);
    if (rule.size) how.push(`size ${rule.size}`);
  }
  if (rule.caption) how.push(`caption ${rule.caption}`);
  return `${what}${scope}: ${how.join(', ') || 'no change'}`;
}

/** Rules read back from a setting, keeping only well-formed ones. */
export function readRules(value: Json | undefined): StyleRule[] {
  if (!Array.isArray(value)) return [];
  const out: StyleRule[] = [];
  for (const v of value) {
    if (!v || typeof v !== 'object' || Array.isArray(v)) continue;
    const r = v as Record<string, Json>;
    if (!['type', 'predicate', 'property'].includes(String(r.on)) || typeof r.name !== 'string' || !r.name) continue;
    const num = (x: Json | undefined) => (typeof x === 'number' && Number.isFinite(x) ? x : undefined);
    const str = (x: Json | undefined) => (typeof x === 'string' && x !== '' ? x : undefined);
    out.push({
      id: str(r.id) ?? `r${out.length}`,
      on: r.on as StyleRule['on'],
      name: r.name,
      equals: str(r.equals),
      min: num(r.min),
      max: num(r.max),
      only: r.only === 'nodes' || r.only === 'links' ? r.only : undefined,
      scale: r.scale === 'size' || r.scale === 'color' ? r.scale : undefined,
      palette: isPalette(r.palette) ? r.palette : undefined,
      color: str(r.color),
      size: num(r.size),
      caption: str(r.caption),
    });
  }
  return out;
}

/** A rule as JSON for the setting (no undefined keys). */
export function ruleJson(rule: StyleRule): { [key: string]: Json } {
  const out: { [key: string]: Json } = {};
  for (const [k, v] of Object.entries(rule)) if (v !== undefined) out[k] = v as Json;
  return out;
}
