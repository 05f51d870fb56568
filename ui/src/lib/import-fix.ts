// The import fix loop (issue 33 §12): an import error's "did you mean" put
// into the file's text at the error's line and column, so that the curator
// applies it and imports again without leaving the app.

/** Where `text`'s line `line` (1-based) starts. */
export function lineStart(text: string, line: number): number {
  let at = 0;
  for (let n = 1; n < line; n++) {
    const next = text.indexOf('\n', at);
    if (next < 0) return text.length;
    at = next + 1;
  }
  return at;
}

const WORD = /[\p{L}\p{N}_$.-]/u;

/**
 * The token an error at `line:column` (1-based) names: the contents of the
 * quoted string the column is on or just before, else the run of name
 * characters around it. `[start, end)` offsets into `text`, or null.
 */
export function tokenAt(text: string, line: number, column: number): [number, number] | null {
  const start = lineStart(text, line);
  const endOfLine = text.indexOf('\n', start) < 0 ? text.length : text.indexOf('\n', start);
  let at = Math.min(start + Math.max(0, column - 1), endOfLine);
  // On an opening quote, or inside a string: its contents.
  const quote = text[at] === '"' || text[at] === "'" ? text[at] : null;
  if (quote) {
    const close = text.indexOf(quote, at + 1);
    return close > at && close <= endOfLine ? [at + 1, close] : null;
  }
  if (at < endOfLine && !WORD.test(text[at]) && at > start && WORD.test(text[at - 1])) at--;
  if (at >= endOfLine || !WORD.test(text[at])) return null;
  let from = at;
  let to = at;
  while (from > start && WORD.test(text[from - 1])) from--;
  while (to < endOfLine && WORD.test(text[to])) to++;
  // Inside a quoted string: its whole contents (names may hold spaces).
  const q = text[from - 1];
  if ((q === '"' || q === "'") && from > start) {
    const close = text.indexOf(q, to);
    if (close >= to && close <= endOfLine) return [from, close];
  }
  return [from, to];
}

/**
 * The name an error's message says is wrong: the last quoted name before
 * its "Did you mean" (`Entity type 'Drgu' is not defined. Did you mean
 * 'Drug'?`, `object Symptom 'Headake' not found. Did you mean …`).
 */
export function wrongName(message: string): string | null {
  const before = message.split(/did you mean/i)[0];
  const quoted = [...before.matchAll(/'([^']+)'|`([^`]+)`/g)];
  const last = quoted[quoted.length - 1];
  return last ? (last[1] ?? last[2]) : null;
}

/** `wrong` as a whole name on line `line`, first at or after `column`, else the first on the line. */
function nameOnLine(text: string, line: number, column: number, wrong: string): [number, number] | null {
  const start = lineStart(text, line);
  const end = text.indexOf('\n', start) < 0 ? text.length : text.indexOf('\n', start);
  const found: number[] = [];
  for (let at = text.indexOf(wrong, start); at >= 0 && at + wrong.length <= end; at = text.indexOf(wrong, at + 1)) {
    const whole = !WORD.test(text[at - 1] ?? ' ') && !WORD.test(text[at + wrong.length] ?? ' ');
    if (whole) found.push(at);
  }
  const at = found.find((a) => a >= start + column - 1) ?? found[0];
  return at === undefined ? null : [at, at + wrong.length];
}

/**
 * `text` with the name an error at `line:column` points at replaced by
 * `suggestion`: `wrong` (the name the message quotes) where it is on that
 * line, else the token at the column; null when neither is there (the
 * error points nowhere the fix can go).
 */
export function applySuggestion(text: string, line: number, column: number, suggestion: string, wrong?: string | null): string | null {
  const token = (wrong ? nameOnLine(text, line, column, wrong) : null) ?? tokenAt(text, line, column);
  if (!token) return null;
  return text.slice(0, token[0]) + suggestion + text.slice(token[1]);
}
