// Exports leave the app the way the host allows: a browser downloads them
// (`<a download>`), the desktop window asks its shell to write them to the
// download folder (a webview drops `<a download>` and blob URLs), and says
// where they went. Copying text falls back to `execCommand('copy')` where
// the async clipboard is missing or refused (WebKitGTK outside a secure
// context).
import { api, toast } from './state.svelte';
import { download } from './export';

/** Offers `content` as the file `name`: downloaded, or saved by the desktop shell (a notice says where). */
export async function saveFile(name: string, content: Blob | string, type = 'text/plain;charset=utf-8'): Promise<void> {
  const transport = api();
  if (!transport.saveFile) {
    download(name, content, type);
    return;
  }
  const blob = typeof content === 'string' ? new Blob([content], { type }) : content;
  const path = await transport.saveFile(name, new Uint8Array(await blob.arrayBuffer()));
  toast('success', `Saved ${name}`, path);
}

/** Puts `text` on the clipboard. */
export async function copyText(text: string): Promise<void> {
  try {
    if (!navigator.clipboard?.writeText) throw new Error('no async clipboard');
    await navigator.clipboard.writeText(text);
    return;
  } catch (e) {
    // A selection in a hidden text area, copied the old way.
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.style.position = 'fixed';
    area.style.opacity = '0';
    document.body.appendChild(area);
    const focused = document.activeElement as HTMLElement | null;
    area.select();
    const ok = document.execCommand('copy');
    area.remove();
    focused?.focus?.();
    if (!ok) throw e;
  }
}
