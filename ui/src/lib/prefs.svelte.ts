// This machine's preferences (theme, panels): kept by the host in its config
// folder (`prefs_get` / `prefs_put`: the desktop app's and `kip serve`'s
// `<config dir>/kip-explorer/prefs.json`), mirrored in localStorage so the
// first paint needs no round trip and a host that keeps none still
// remembers them in this browser. What belongs to the knowledge (styling,
// saved queries) is kept with the nexus instead (nexus-settings.svelte.ts).
import type { JsonValue, Transport } from '../transport/types';

const LOCAL = 'kip-explorer.';

/** The host's preferences once read (reactive: views follow them). */
export const prefs = $state<{ values: Record<string, JsonValue>; host: boolean }>({ values: {}, host: false });

let host: Pick<Transport, 'prefsPut'> | null = null;

function readLocal(key: string): JsonValue | undefined {
  const raw = localStorage.getItem(LOCAL + key);
  if (raw === null) return undefined;
  try {
    return JSON.parse(raw) as JsonValue;
  } catch {
    // Older builds kept plain strings (`dark`, `closed`).
    return raw;
  }
}

/** A preference: the host's, else this browser's, else `fallback`. */
export function pref<T extends JsonValue>(key: string, fallback: T): T {
  const v = key in prefs.values ? prefs.values[key] : readLocal(key);
  return (v === undefined || v === null ? fallback : v) as T;
}

/** Reads the host's preferences; a host without them leaves localStorage alone in charge. */
export async function loadPrefs(t: Transport): Promise<void> {
  if (!t.prefsGet) return;
  try {
    const { values } = await t.prefsGet();
    const clean: Record<string, JsonValue> = {};
    for (const [k, v] of Object.entries(values)) {
      if (v === undefined) continue;
      clean[k] = v;
      localStorage.setItem(LOCAL + k, JSON.stringify(v));
    }
    host = t;
    prefs.values = clean;
    prefs.host = true;
  } catch {
    host = null;
  }
}

/** Remembers a preference here and, when the host keeps them, there. */
export function setPref(key: string, value: JsonValue): void {
  localStorage.setItem(LOCAL + key, JSON.stringify(value));
  if (JSON.stringify(prefs.values[key]) === JSON.stringify(value)) return;
  prefs.values = { ...prefs.values, [key]: value };
  host?.prefsPut?.(key, value).catch((e) => console.warn('saving a preference failed', e));
}
