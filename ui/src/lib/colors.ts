// Stable colours per concept type: the same type always gets the same
// colour, in every session and on every machine (a hash of its name picks
// from a palette chosen to stay distinct on light and dark backgrounds).

const PALETTE = [
  '#5b8def', '#2fb59b', '#f0a04b', '#e0607e', '#9b7bea', '#4fb3d9',
  '#c2a83e', '#7cc35a', '#e07b4f', '#d46bc4', '#6f87a6', '#3fbf7f',
];

/** FNV-1a over UTF-16 code units: tiny, stable, good enough to spread names. */
export function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

const FIXED: Record<string, string> = {
  $ConceptType: '#8a93a6',
  $PropositionType: '#a0a7b4',
  Domain: '#b58df0',
  Person: '#f27f6b',
};

export function typeColor(type: string): string {
  return FIXED[type] ?? PALETTE[hash(type) % PALETTE.length];
}

/** The colour of a higher-order link's proposition node. */
export const LINK_NODE_COLOR = '#9aa3b5';
