// The Cognitive Primer's shape as the UI reads it, and what follows from it
// alone: the order domains are shown in and the first graph's queries.
import type { JsonObject } from './kip';

/** One domain of `DESCRIBE PRIMER`'s `domain_map`. */
export interface DomainEntry {
  domain: string;
  description?: string;
  key_concept_types?: string[];
  key_proposition_types?: string[];
  /**
   * As COUNT queries count them: `by_type` every concept of each key type
   * (the types defined in this domain), `concepts` their sum, `members`
   * the concepts linked to the domain and `member_types` those by type.
   */
  counts?: { concepts?: number; by_type?: Record<string, number>; members?: number; member_types?: Record<string, number> };
}

export interface Primer {
  domain_map?: DomainEntry[];
}

/** The memory first: the largest domains by members, the engine's own CoreSchema last. */
export function sortDomains(domains: DomainEntry[]): DomainEntry[] {
  return [...domains].sort(
    (a, b) => Number(a.domain === 'CoreSchema') - Number(b.domain === 'CoreSchema') || (b.counts?.members ?? 0) - (a.counts?.members ?? 0),
  );
}

/** At most this many queries of 40 concepts each make the first picture. */
const SEED_QUERIES = 16;

/** A domain's members that are not definitions (`$ConceptType`, …), by type. */
const instanceMembers = (d: DomainEntry) => Object.entries(d.counts?.member_types ?? {}).filter(([t]) => !t.startsWith('$'));
const instanceCount = (d: DomainEntry) => instanceMembers(d).reduce((s, [, n]) => s + n, 0);

/**
 * The first picture's queries (see `seedGraph`): the members of the
 * domains with the most (instances, not definitions), by type, where the
 * type is not one the domain defines — those come next, with every key
 * type of every domain but CoreSchema. Bounded.
 */
export function seedCommands(primer: Primer): { command: string; parameters: JsonObject }[] {
  const domains = (primer.domain_map ?? []).filter((d) => d.domain !== 'CoreSchema');
  domains.sort((a, b) => instanceCount(b) - instanceCount(a));
  const out: { command: string; parameters: JsonObject }[] = [];
  for (const d of domains) {
    const members = instanceMembers(d).filter(([t]) => !(d.key_concept_types ?? []).includes(t));
    members.sort((a, b) => b[1] - a[1]);
    for (const [type] of members) {
      out.push({ command: 'FIND(?x) WHERE { ?x {type: :type} (?x, "belongs_to_domain", {type: "Domain", name: :domain}) } LIMIT 40', parameters: { type, domain: d.domain } });
    }
  }
  const types = new Set<string>();
  for (const d of domains) for (const t of d.key_concept_types ?? []) if (!t.startsWith('$')) types.add(t);
  for (const type of types) out.push({ command: 'FIND(?x) WHERE { ?x {type: :type} } LIMIT 40', parameters: { type } });
  return out.slice(0, SEED_QUERIES);
}

/** Memories with more concepts than this open on the schema map. */
export const LARGE_MEMORY = 5000;
