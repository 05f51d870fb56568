// The console's CodeMirror 6 editor: its extensions (the KIP mode,
// schema-aware completion, the engine's diagnostics, the keys: Run, Debug,
// Format), and the query debugger's marks in the text (the clause under the
// pointer, the failing clauses in red). The console supplies what they do.
import { EditorState, StateEffect, StateField, type Range as CmRange } from '@codemirror/state';
import { Decoration, EditorView, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter, drawSelection, placeholder, type DecorationSet } from '@codemirror/view';
import { defaultKeymap, history as cmHistory, historyKeymap, indentWithTab } from '@codemirror/commands';
import { autocompletion, closeBrackets, closeBracketsKeymap, completionKeymap } from '@codemirror/autocomplete';
import { linter, lintGutter, type Diagnostic } from '@codemirror/lint';
import { bracketMatching, indentOnInput } from '@codemirror/language';
import { searchKeymap, highlightSelectionMatches } from '@codemirror/search';
import type { Range } from '../../transport';
import { kip } from './kip-language';
import { kipCompletion, type SchemaSource } from './assist';
import { toEditorRange } from './debug';

/** What the editor asks the console for, and tells it. */
export interface EditorHooks {
  /** Completion's source: the live schema and SEARCH. */
  schema: SchemaSource;
  /** The engine's diagnostics for the text (checked 350 ms after typing stops). */
  lint(view: EditorView): Promise<Diagnostic[]>;
  run(): void;
  debug(): void;
  format(): void;
  /** The text changed (typed, or set). */
  changed(text: string): void;
  /** The pointer is over `pos` of the text (null: over no text, or gone). */
  pointer(pos: number | null, view: EditorView): void;
}

// The debugger's marks in the editor: the clause under the pointer (in
// the editor or the diagram) and the clauses that fail, in red.
const setMarks = StateEffect.define<DecorationSet>();
const debugMarks = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(marks, tr) {
    for (const e of tr.effects) if (e.is(setMarks)) return e.value;
    return tr.docChanged ? marks.map(tr.changes) : marks;
  },
  provide: (f) => EditorView.decorations.from(f),
});
const hoverMark = Decoration.mark({ class: 'cm-kip-hover' });
const failMark = Decoration.mark({ class: 'cm-kip-fail', attributes: { 'data-testid': 'failing-clause' } });

/** Marks the failing clauses (engine ranges of `doc`) and the hovered one in the editor. */
export function showDebugMarks(view: EditorView, doc: string, failing: Range[], hovered: Range | null) {
  const marks: CmRange<Decoration>[] = [];
  const push = (r: Range, mark: Decoration) => {
    const { from, to } = toEditorRange(doc, r);
    if (to > from && to <= doc.length) marks.push(mark.range(from, to));
  };
  for (const r of failing) push(r, failMark);
  if (hovered) push(hovered, hoverMark);
  view.dispatch({ effects: setMarks.of(Decoration.set(marks, true)) });
}

/** The console's editor in `parent`, holding `doc`. */
export function createEditor(parent: HTMLElement, doc: string, hooks: EditorHooks): EditorView {
  return new EditorView({
    parent,
    state: EditorState.create({
      doc,
      extensions: [
        lineNumbers(),
        highlightActiveLineGutter(),
        highlightActiveLine(),
        drawSelection(),
        cmHistory(),
        indentOnInput(),
        bracketMatching(),
        closeBrackets(),
        highlightSelectionMatches(),
        placeholder('Write KIP here — FIND, UPSERT, DELETE, DESCRIBE, SEARCH'),
        kip(),
        autocompletion({ override: [kipCompletion(hooks.schema)], activateOnTyping: true, icons: true }),
        linter((v) => hooks.lint(v), { delay: 350 }),
        lintGutter(),
        keymap.of([
          { key: 'Mod-Enter', run: () => (hooks.run(), true), preventDefault: true },
          { key: 'Mod-Shift-Enter', run: () => (hooks.debug(), true), preventDefault: true },
          { key: 'Shift-Alt-f', run: () => (hooks.format(), true) },
          ...closeBracketsKeymap,
          ...completionKeymap,
          ...searchKeymap,
          ...historyKeymap,
          indentWithTab,
          ...defaultKeymap,
        ]),
        EditorView.updateListener.of((u) => {
          if (u.docChanged) hooks.changed(u.state.doc.toString());
        }),
        EditorView.contentAttributes.of({ 'aria-label': 'KIP editor', 'data-testid': 'kip-editor' }),
        debugMarks,
        EditorView.domEventHandlers({
          mousemove(event, v) {
            hooks.pointer(v.posAtCoords({ x: event.clientX, y: event.clientY }), v);
          },
          mouseleave(_event, v) {
            hooks.pointer(null, v);
          },
        }),
      ],
    }),
  });
}
