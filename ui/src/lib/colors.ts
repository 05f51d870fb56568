// Stable colours per concept type: the same type always gets the same
// colour, in every session and on every machine (a hash of its name picks
// from a palette of distinct hues).

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

// Twenty hues that stay apart from one another on light and dark panels.
const PALETTE = [
  '#4e79a7', '#f28e2b', '#e15759', '#59a14f', '#b07aa1', '#76b7b2', '#edc948', '#ff9da7', '#9c755f', '#86bcb6',
  '#d37295', '#8cd17d', '#499894', '#f1ce63', '#a0cbe8', '#ffbe7d', '#5b8def', '#b6992d', '#e377c2', '#17becf',
];

/** Murmur3's finaliser: spreads FNV's bits so that short names land apart. */
function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

// Chosen so that the types of the example capsules and the benchmark graph
// all get different colours; any other name still gets a stable one.
const SEED = 132;

export function typeColor(type: string): string {
  return FIXED[type] ?? PALETTE[mix(hash(type) ^ SEED) % PALETTE.length];
}

/** The colour of a higher-order link's proposition node. */
export const LINK_NODE_COLOR = '#9aa3b5';
