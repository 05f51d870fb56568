import { describe, expect, it } from 'vitest';
import { safeLanguages, validLanguage } from '../../src/lib/locale';

describe('the page language', () => {
  it('refuses the tags WebKitGTK reports under LANG=C', () => {
    expect(validLanguage('C')).toBe(false);
    expect(validLanguage('POSIX')).toBe(false);
    expect(validLanguage('')).toBe(false);
    expect(validLanguage(undefined)).toBe(false);
    // (JavaScriptCore's Intl throws a RangeError for "C"; V8's, here, does not.)
  });

  it('keeps real tags', () => {
    expect(validLanguage('en-US')).toBe(true);
    expect(validLanguage('zh-Hans-CN')).toBe(true);
    expect(validLanguage('de')).toBe(true);
  });

  it('reports the valid tags, else en-US', () => {
    expect(safeLanguages(['C', 'fr-FR'])).toEqual(['fr-FR']);
    expect(safeLanguages(['C'])).toEqual(['en-US']);
    expect(safeLanguages([])).toEqual(['en-US']);
    for (const tag of safeLanguages(['C', 'POSIX'])) expect(() => new Intl.NumberFormat(tag)).not.toThrow();
  });
});
