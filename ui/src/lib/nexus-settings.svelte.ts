// Settings kept with the nexus (kip-api's `settings_get` / `settings_put`):
// styling rules, saved queries and saved scenes belong to the knowledge,
// not to one machine, so the desktop app and a browser on `kip serve` see
// the same ones. Keys are namespaced `ui.*`.
import type { Json } from './kip';
import type { Transport } from '../transport';

export const STYLES_KEY = 'ui.styles';
export const QUERIES_KEY = 'ui.queries';
export const SCENES_KEY = 'ui.scenes';

export const nexusSettings = $state({
  loaded: false,
  /** Why settings cannot be saved here (a read-only host), if they cannot. */
  readOnly: false,
  values: {} as Record<string, Json>,
});

let host: Transport | null = null;

/** Reads every `ui.*` setting of the nexus once the transport is up. */
export async function loadNexusSettings(t: Transport) {
  host = t;
  try {
    const r = await t.settingsGet('ui.');
    const values: Record<string, Json> = {};
    for (const [k, v] of Object.entries(r.values)) if (v !== undefined) values[k] = v;
    nexusSettings.values = values;
  } catch {
    // A host without settings (an older `kip serve`): they live in this page only.
    nexusSettings.values = {};
  }
  nexusSettings.loaded = true;
}

export function nexusSetting(key: string): Json | undefined {
  return nexusSettings.values[key];
}

/** Stores a setting with the nexus (and at once in this page). Throws what the host refused. */
export async function saveNexusSetting(key: string, value: Json) {
  nexusSettings.values = { ...nexusSettings.values, [key]: value };
  if (!host) return;
  try {
    await host.settingsPut(key, value);
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'KIP_3004') nexusSettings.readOnly = true;
    throw e;
  }
}
