// KML for the inspector's edits: what a curator changed in the form,
// written as the KIP commands that make that change. The text is shown,
// previewed (dry run) and only then applied.
import { conceptRef, isConcept, lit, objectLiteral, type Element, type Json, type JsonObject } from './kip';

export interface Edit {
  /** Attributes set or changed, with their new values. */
  set: JsonObject;
  /** Attribute keys removed. */
  remove: string[];
  /** Metadata keys set or changed (user keys only; `_`-keys are the engine's). */
  metadata: JsonObject;
}

function propositionPattern(e: Extract<Element, { _type: 'PropositionLink' }>): string {
  return `({id: ${lit(e.subject)}}, ${lit(e.predicate)}, {id: ${lit(e.object)}})`;
}

/** The KML that applies `edit` to `element`, or '' when nothing changes. */
export function editToKml(element: Element, edit: Edit): string {
  const commands: string[] = [];
  const hasSet = Object.keys(edit.set).length > 0;
  const hasMeta = Object.keys(edit.metadata).length > 0;
  if (hasSet || hasMeta) {
    const attrs = hasSet ? `\n    SET ATTRIBUTES ${objectLiteral(edit.set, '    ')}` : '';
    const meta = hasMeta ? `\n    WITH METADATA ${objectLiteral(edit.metadata, '    ')}` : '';
    if (isConcept(element)) {
      commands.push(`UPSERT {\n  CONCEPT ?e {\n    ${conceptRef(element)}${attrs}\n  }${meta ? meta.replace(/\n {4}/g, '\n  ') : ''}\n}`);
    } else {
      commands.push(`UPSERT {\n  PROPOSITION ?e {\n    ${propositionPattern(element)}${attrs}\n  }${meta ? meta.replace(/\n {4}/g, '\n  ') : ''}\n}`);
    }
  }
  if (edit.remove.length) {
    const keys = edit.remove.map((k) => lit(k)).join(', ');
    const where = isConcept(element) ? `?e ${conceptRef(element)}` : `?e ${propositionPattern(element)}`;
    commands.push(`DELETE ATTRIBUTES {${keys}} FROM ?e\nWHERE {\n  ${where}\n}`);
  }
  return commands.join('\n\n');
}

/** The KML that deletes an element (a concept with its links). */
export function deleteKml(element: Element): string {
  if (isConcept(element)) return `DELETE CONCEPT ?e DETACH\nWHERE {\n  ?e ${conceptRef(element)}\n}`;
  return `DELETE PROPOSITIONS ?e\nWHERE {\n  ?e (id: ${lit(element.id)})\n}`;
}

/** Parses a form field: JSON when it is JSON, else the text as a string. */
export function parseField(raw: string): Json {
  const t = raw.trim();
  if (t === '') return '';
  try {
    return JSON.parse(t);
  } catch {
    return raw;
  }
}

export function showField(v: Json | undefined): string {
  return typeof v === 'string' ? v : JSON.stringify(v ?? null);
}
