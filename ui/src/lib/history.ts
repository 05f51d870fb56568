// The console's persistent history: every command run, newest first,
// de-duplicated, searchable, kept in localStorage (per origin, so the
// desktop shell and each `kip serve` address keep their own).
import { zoneName } from './time';

export interface HistoryEntry {
  text: string;
  at: string;
  ok: boolean;
  parameters?: string;
}

const KEY = 'kip-explorer.history.v1';
const MAX = 500;

export function loadHistory(storage: Pick<Storage, 'getItem'> = localStorage): HistoryEntry[] {
  try {
    const raw = storage.getItem(KEY);
    const parsed = raw ? JSON.parse(raw) : [];
    return Array.isArray(parsed) ? parsed.filter((e) => typeof e?.text === 'string') : [];
  } catch {
    return [];
  }
}

export function pushHistory(
  entries: HistoryEntry[],
  entry: HistoryEntry,
  storage: Pick<Storage, 'setItem'> = localStorage,
): HistoryEntry[] {
  const next = [entry, ...entries.filter((e) => e.text.trim() !== entry.text.trim())].slice(0, MAX);
  try {
    storage.setItem(KEY, JSON.stringify(next));
  } catch {
    // Storage full or unavailable: keep the history for this session only.
  }
  return next;
}

/** Entries containing every whitespace-separated term of `query`, case-insensitively. */
export function searchHistory(entries: HistoryEntry[], query: string): HistoryEntry[] {
  const terms = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (!terms.length) return entries;
  return entries.filter((e) => {
    const t = e.text.toLowerCase();
    return terms.every((term) => t.includes(term));
  });
}

/**
 * When an entry ran, short: the time for today ("14:03 UTC"), "yesterday
 * 14:03 UTC", else the date and time — in the UI's one format, to the
 * minute, with the time zone (`lib/time.ts`). `now` is for tests.
 */
export function historyTime(at: string, now: Date = new Date()): string {
  const t = new Date(at);
  if (Number.isNaN(t.getTime())) return '';
  const hm = `${String(t.getHours()).padStart(2, '0')}:${String(t.getMinutes()).padStart(2, '0')} ${zoneName(t)}`;
  const day = (d: Date) => new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
  const days = Math.round((day(now) - day(t)) / 86_400_000);
  if (days === 0) return hm;
  if (days === 1) return `yesterday ${hm}`;
  const date = `${t.getFullYear()}-${String(t.getMonth() + 1).padStart(2, '0')}-${String(t.getDate()).padStart(2, '0')}`;
  return `${date} ${hm}`;
}

/**
 * A query shown in one short line (issue 33 §13): spaces collapsed, at
 * most `max` characters, and a variable's or parameter's sigil (`?pref`,
 * `$self`, `:name`) joined to its name with a word joiner, so a line never
 * breaks between them.
 */
export function historyPreview(text: string, max = 140): string {
  return text
    .replace(/\s+/g, ' ')
    .slice(0, max)
    .replace(/([?$:])(?=[\p{L}\p{N}_])/gu, '$1\u2060');
}
