import { describe, expect, it } from 'vitest';
import { applySuggestion, lineStart, tokenAt, wrongName } from '../../src/lib/import-fix';

const capsule = 'UPSERT {\n  CONCEPT ?d { {type: "Drgu", name: "Aspirin"} }\n}\n';

describe('the import fix loop', () => {
  it('finds where a line starts', () => {
    expect(lineStart(capsule, 1)).toBe(0);
    expect(capsule.slice(lineStart(capsule, 2)).startsWith('  CONCEPT')).toBe(true);
    expect(lineStart(capsule, 99)).toBe(capsule.length);
  });

  it('replaces the quoted name an error points at, on its quote or inside it', () => {
    const quote = capsule.split('\n')[1].indexOf('"Drgu"') + 1;
    expect(applySuggestion(capsule, 2, quote, 'Drug')).toBe(capsule.replace('Drgu', 'Drug'));
    expect(applySuggestion(capsule, 2, quote + 2, 'Drug')).toBe(capsule.replace('Drgu', 'Drug'));
  });

  it('replaces a whole quoted name with spaces, and a bare YAML value', () => {
    const text = '- type: Drug\n  name: "Old  name"\n  treats: Headake\n';
    const col = text.split('\n')[1].indexOf('Old') + 1;
    expect(applySuggestion(text, 2, col, 'New name')).toBe(text.replace('Old  name', 'New name'));
    const bare = text.split('\n')[2].indexOf('Headake') + 1;
    expect(applySuggestion(text, 3, bare, 'Headache')).toBe(text.replace('Headake', 'Headache'));
  });

  it('finds the name the message quotes when the column points at its element', () => {
    const text = 'UPSERT {\n  CONCEPT ?d { {type: "Drug", name: "Aspirin"} SET PROPOSITIONS { ("treats", {type: "Symptom", name: "Headake"}) } }\n}\n';
    const message = "Cannot create 'treats': object Symptom 'Headake' not found. Did you mean 'Headache'?";
    expect(wrongName(message)).toBe('Headake');
    expect(wrongName("Entity type 'Drgu' is not defined. Did you mean 'Drug'?")).toBe('Drgu');
    expect(wrongName('Unexpected token')).toBeNull();
    expect(applySuggestion(text, 2, 78, 'Headache', wrongName(message))).toBe(text.replace('Headake', 'Headache'));
  });

  it('changes nothing where no token is', () => {
    expect(tokenAt(capsule, 3, 5)).toBeNull();
    expect(applySuggestion('{ }', 1, 2, 'x')).toBeNull();
  });
});
