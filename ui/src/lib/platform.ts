// The platform's command modifier: ⌘ on Apple systems, Ctrl elsewhere.
// Shortcuts accept either key everywhere; this only decides what is shown.

function apple(): boolean {
  const nav = typeof navigator === 'undefined' ? undefined : navigator;
  const platform = (nav as { userAgentData?: { platform?: string } } | undefined)?.userAgentData?.platform ?? nav?.platform ?? '';
  return /mac|iphone|ipad/i.test(platform);
}

/** The modifier's label: "⌘" on macOS and iOS, "Ctrl" elsewhere. */
export const MOD = apple() ? '⌘' : 'Ctrl';

/** Whether a click was made with the platform's modifier held. */
export function modClick(e: MouseEvent): boolean {
  return apple() ? e.metaKey : e.ctrlKey;
}
