// The import progress bar's words and fill, from the host's reports.
import { describe, expect, it } from 'vitest';
import { describe as say, formatBytes, fraction, shown, SHOW_AFTER_MS } from '../../src/lib/import-progress';
import type { ImportProgress } from '../../src/transport/generated/kip-api';

const p = (over: Partial<ImportProgress>): ImportProgress => ({
  phase: 'validating',
  items: 0,
  total_items: 0,
  bytes: 0,
  total_bytes: 3_088_870,
  elapsed_ms: 1500,
  ...over,
});

describe('import progress', () => {
  it('shows a bar only for imports running over a second', () => {
    expect(SHOW_AFTER_MS).toBe(1000);
    expect(shown(undefined)).toBe(false);
    expect(shown(p({ elapsed_ms: 999 }))).toBe(false);
    expect(shown(p({ elapsed_ms: 1000 }))).toBe(true);
  });

  it('says the phase, the bytes and the items', () => {
    expect(say(p({ phase: 'validating', bytes: 1_200_000, items: 5000, total_items: 20000 }))).toBe(
      'Checking · 1.2 MB of 3.1 MB · 5,000 of 20,000 items',
    );
    expect(say(p({ phase: 'parsing', total_bytes: 900 }))).toBe('Reading · 0 B of 900 B');
    expect(say(p({ phase: 'applying', bytes: 3_088_870, items: 120, total_items: 200 }))).toBe(
      'Writing · 3.1 MB of 3.1 MB · 120 of 200 items',
    );
    expect(formatBytes(45_000)).toBe('45 kB');
    expect(formatBytes(2_500_000_000)).toBe('2.50 GB');
  });

  it('fills with the bytes checked, then with the items written', () => {
    expect(fraction(p({ phase: 'parsing' }))).toBe(0);
    expect(fraction(p({ phase: 'validating', bytes: 3_088_870 / 2 }))).toBeCloseTo(0.15);
    expect(fraction(p({ phase: 'applying', items: 0, total_items: 200 }))).toBeCloseTo(0.3);
    expect(fraction(p({ phase: 'applying', items: 100, total_items: 200 }))).toBeCloseTo(0.65);
    expect(fraction(p({ phase: 'applying', items: 200, total_items: 200 }))).toBe(1);
    expect(fraction(p({ phase: 'validating', bytes: 10, total_bytes: 0 }))).toBe(0);
  });

  it('fills a streamed capsule (parts, no item total) with the bytes taken in', () => {
    const streamed = p({ phase: 'applying', items: 3, total_items: 0, bytes: 3_088_870 / 4 });
    expect(fraction(streamed)).toBeCloseTo(0.25);
    expect(say(streamed)).toBe('Writing · 772 kB of 3.1 MB');
  });
});
