// A CodeMirror 6 language mode for KIP: a stream tokenizer for
// highlighting (keywords, strings, numbers, ?variables, :parameters,
// $meta-types, comments) and the highlight styles of both themes. It only
// colours text; the engine does all validation.
import { HighlightStyle, LanguageSupport, StreamLanguage, StringStream, syntaxHighlighting, type StreamParser } from '@codemirror/language';
import { tags as t } from '@lezer/highlight';

export const KEYWORDS = [
  'FIND', 'WHERE', 'FILTER', 'NOT', 'OPTIONAL', 'UNION', 'ORDER', 'BY', 'ASC', 'DESC', 'LIMIT', 'CURSOR',
  'UPSERT', 'CONCEPT', 'PROPOSITION', 'SET', 'ATTRIBUTES', 'PROPOSITIONS', 'WITH', 'METADATA',
  'DELETE', 'FROM', 'DETACH', 'DESCRIBE', 'PRIMER', 'DOMAINS', 'CONCEPT TYPES', 'PROPOSITION TYPES', 'TYPE',
  'SEARCH', 'IN',
  // RC9–RC10 additions, accepted by the engine as a compatible superset.
  'UPDATE', 'MERGE', 'INTO', 'EXPECT VERSION', 'EXPORT', 'MODE', 'THRESHOLD',
];

export const FUNCTIONS = [
  'COUNT', 'SUM', 'AVG', 'MIN', 'MAX', 'DISTINCT',
  'IS_NULL', 'IS_NOT_NULL', 'CONTAINS', 'STARTS_WITH', 'ENDS_WITH', 'REGEX',
  // UPDATE's update expressions (RC9).
  'ADD', 'MUL', 'CLAMP', 'COALESCE',
];

/** The retrieval modes of `SEARCH … MODE` (RC9); this nexus answers only "keyword". */
export const SEARCH_MODES = ['keyword', 'semantic', 'hybrid'];

const KEYWORD_SET = new Set(KEYWORDS.flatMap((k) => k.split(' ')).concat(['TYPES']));
const FUNCTION_SET = new Set(FUNCTIONS);

interface State {
  /** Inside a `{ … }` value or pattern: identifiers there are keys. */
  braceDepth: number;
}

const parser: StreamParser<State> = {
  name: 'kip',
  startState: () => ({ braceDepth: 0 }),
  token(stream, state) {
    if (stream.eatSpace()) return null;
    if (stream.match('//')) {
      stream.skipToEnd();
      return 'comment';
    }
    const ch = stream.peek();
    if (ch === '"') {
      stream.next();
      let escaped = false;
      let c: string | void;
      while ((c = stream.next()) !== undefined) {
        if (c === '"' && !escaped) break;
        escaped = !escaped && c === '\\';
      }
      // A string followed by `:` is an object key.
      return stream.match(/^\s*:/, false) ? 'propertyName' : 'string';
    }
    if (stream.match(/^-?\d+(\.\d+)?([eE][+-]?\d+)?/)) return 'number';
    if (stream.match(/^\?[A-Za-z_][A-Za-z0-9_]*/)) return 'variableName';
    if (stream.match(/^:[A-Za-z_][A-Za-z0-9_]*/)) return 'variableName.special';
    if (stream.match(/^\$[A-Za-z_][A-Za-z0-9_]*/)) return 'typeName';
    const word = stream.match(/^[A-Za-z_][A-Za-z0-9_]*/) as RegExpMatchArray | null;
    if (word) {
      const w = word[0];
      if (w === 'true' || w === 'false') return 'bool';
      if (w === 'null') return 'null';
      // `LIMIT :n`, `EXPECT VERSION :v`: a keyword before a placeholder, not an object key.
      if (KEYWORD_SET.has(w) && stream.match(/^\s*:[A-Za-z_]/, false)) return 'keyword';
      if (stream.match(/^\s*:/, false)) return 'propertyName';
      if (FUNCTION_SET.has(w)) return 'variableName.function';
      if (KEYWORD_SET.has(w)) return 'keyword';
      return 'name';
    }
    if (ch === '{') state.braceDepth++;
    if (ch === '}') state.braceDepth = Math.max(0, state.braceDepth - 1);
    stream.next();
    if ('{}()[]'.includes(ch ?? '')) return 'bracket';
    if ('=!<>&|+-*/'.includes(ch ?? '')) return 'operator';
    return 'punctuation';
  },
  languageData: {
    commentTokens: { line: '//' },
    closeBrackets: { brackets: ['(', '[', '{', '"'] },
  },
};

export const kipLanguage = StreamLanguage.define(parser);

/** The highlighting classes of one line, token by token (for tests and tools). */
export function tokenize(line: string): [string, string | null][] {
  const stream = new StringStream(line, 2, 2);
  const state = parser.startState!(2);
  const out: [string, string | null][] = [];
  while (!stream.eol()) {
    const style = parser.token(stream, state);
    const text = stream.current();
    if (text.trim()) out.push([text, style]);
    stream.start = stream.pos;
  }
  return out;
}

const highlight = HighlightStyle.define([
  { tag: t.keyword, color: 'var(--syn-keyword)', fontWeight: '600' },
  { tag: t.function(t.variableName), color: 'var(--syn-function)' },
  { tag: t.string, color: 'var(--syn-string)' },
  { tag: t.number, color: 'var(--syn-number)' },
  { tag: [t.bool, t.null], color: 'var(--syn-number)' },
  { tag: t.variableName, color: 'var(--syn-variable)' },
  { tag: t.special(t.variableName), color: 'var(--syn-param)', fontStyle: 'italic' },
  { tag: t.typeName, color: 'var(--syn-type)' },
  { tag: t.propertyName, color: 'var(--syn-property)' },
  { tag: t.comment, color: 'var(--syn-comment)', fontStyle: 'italic' },
  { tag: [t.bracket, t.punctuation, t.operator], color: 'var(--syn-punct)' },
]);

export function kip(): LanguageSupport {
  return new LanguageSupport(kipLanguage, [syntaxHighlighting(highlight)]);
}
