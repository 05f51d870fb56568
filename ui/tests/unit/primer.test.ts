// The Primer's pure parts (issue 33 §1): domains shown memory first, and
// the first graph drawn from the largest domains' members.
import { describe, expect, it } from 'vitest';
import { seedCommands, sortDomains, type DomainEntry } from '../../src/lib/primer';

const domains: DomainEntry[] = [
  { domain: 'CoreSchema', key_concept_types: ['Person', 'Event'], counts: { members: 40, member_types: { $ConceptType: 30, Person: 2 } } },
  { domain: 'Medical', key_concept_types: ['Drug', 'Symptom'], counts: { members: 3, member_types: { Drug: 3 } } },
  { domain: 'Relationships', key_concept_types: [], counts: { members: 10, member_types: { Person: 3, Preference: 4, Event: 2, $ConceptType: 1 } } },
];

describe('sortDomains', () => {
  it('puts the largest domains by members first and CoreSchema last', () => {
    expect(sortDomains(domains).map((d) => d.domain)).toEqual(['Relationships', 'Medical', 'CoreSchema']);
  });
});

describe('seedCommands', () => {
  it('asks for the members of the largest domains first, by type, then the key types, never definitions or CoreSchema', () => {
    const c = seedCommands({ domain_map: domains });
    // Medical's Drugs come with its key types, not twice.
    expect(c.map((x) => [x.parameters.domain ?? null, x.parameters.type])).toEqual([
      ['Relationships', 'Preference'],
      ['Relationships', 'Person'],
      ['Relationships', 'Event'],
      [null, 'Drug'],
      [null, 'Symptom'],
    ]);
    expect(c[0].command).toContain('belongs_to_domain');
  });

  it('keeps to its bound', () => {
    const many: DomainEntry[] = [{ domain: 'Big', counts: { members: 99, member_types: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`T${i}`, i + 1])) } }];
    expect(seedCommands({ domain_map: many })).toHaveLength(16);
  });
});
