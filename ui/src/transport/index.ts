// Picks the transport at run time: the desktop shell injects Tauri's IPC
// (`window.__TAURI_INTERNALS__`); anywhere else the UI was served by
// `kip serve` and talks HTTP to the same origin.
import { HttpTransport } from './http';
import type { Transport } from './types';

export * from './types';

export function inDesktopShell(): boolean {
  return typeof window !== 'undefined' && '__TAURI_INTERNALS__' in window;
}

export async function createTransport(): Promise<Transport> {
  if (inDesktopShell()) {
    // Loaded lazily so the browser build never evaluates Tauri's IPC glue.
    const { TauriTransport } = await import('./tauri');
    return new TauriTransport();
  }
  return new HttpTransport('');
}
