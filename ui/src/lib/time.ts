// One way to show time in the whole UI (issue 33 §9): `2026-11-27 20:26:43
// UTC` — year first, 24 hours, and always the time zone it is shown in
// (the browser's), so a curator comparing the Trace, the inspector and the
// Primer reads one format. The engine stores ISO 8601 in UTC; these helpers
// only present it, and turn `datetime-local` inputs back into ISO.

/** An ISO 8601 date-time as the engine writes it (`2026-11-27T20:26:43Z`, offsets and fractions allowed). */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;

export const isIsoTime = (v: unknown): v is string => typeof v === 'string' && ISO_TIME.test(v) && !Number.isNaN(Date.parse(v));

const pad = (n: number) => String(n).padStart(2, '0');

/** The short name of the time zone `d` is shown in (`UTC`, `CET`, `GMT+9`). */
export function zoneName(d: Date, timeZone?: string): string {
  const part = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'short' }).formatToParts(d).find((p) => p.type === 'timeZoneName');
  return part?.value ?? 'UTC';
}

/**
 * `2026-11-27 20:26:43 UTC` in the browser's zone (or `timeZone`); `—` for
 * nothing or a value that is not a time. `seconds: false` drops the seconds.
 */
export function formatTime(v: string | number | Date | null | undefined, opts: { seconds?: boolean; timeZone?: string } = {}): string {
  if (v === null || v === undefined || v === '') return '—';
  const d = v instanceof Date ? v : new Date(v);
  if (Number.isNaN(d.getTime())) return typeof v === 'string' ? v : '—';
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone: opts.timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    })
      .formatToParts(d)
      .map((p) => [p.type, p.value]),
  );
  const time = `${parts.hour}:${parts.minute}${opts.seconds === false ? '' : `:${parts.second}`}`;
  return `${parts.year}-${parts.month}-${parts.day} ${time} ${zoneName(d, opts.timeZone)}`;
}

/** Whether an ISO time lies before `now` (a past `expires_at`). */
export const isPast = (v: unknown, now: number = Date.now()): boolean => isIsoTime(v) && Date.parse(v) < now;

/** An ISO time as a `datetime-local` input's value (local time, to the second); '' if it is none. */
export function toLocalInput(v: unknown): string {
  if (!isIsoTime(v)) return '';
  const d = new Date(v);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** A `datetime-local` input's value (local time) as ISO 8601 UTC to the second; '' if empty or invalid. */
export function fromLocalInput(value: string): string {
  if (!value.trim()) return '';
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? '' : d.toISOString().replace(/\.\d+Z$/, 'Z');
}
