// The page's language, made safe for Intl before any other module runs
// (main.ts imports this first). WebKitGTK reports the process's locale as
// `navigator.language`; under `LANG=C` (a bare Debian root session, the
// test machines) that is "C", which Intl refuses with a RangeError — and
// uPlot passes `navigator.language` to `Intl.NumberFormat` when it loads,
// so one bad tag stopped the whole UI from mounting in the desktop window.

/** Whether `tag` is a BCP 47 language tag with a 2–3 letter language
 * that Intl accepts. The syntax is checked here because engines differ:
 * V8 takes "C", JavaScriptCore throws. */
export function validLanguage(tag: string | undefined | null): boolean {
  if (!tag || !/^[a-z]{2,3}(-[a-z0-9]{1,8})*$/i.test(tag)) return false;
  try {
    return Intl.getCanonicalLocales(tag).length === 1;
  } catch {
    return false;
  }
}

/** The tags to report instead of `languages`: the valid ones, else `fallback`. */
export function safeLanguages(languages: readonly string[], fallback = 'en-US'): string[] {
  const ok = languages.filter((l) => validLanguage(l));
  return ok.length ? ok : [fallback];
}

if (typeof navigator !== 'undefined' && !validLanguage(navigator.language)) {
  const languages = safeLanguages(navigator.languages ?? []);
  Object.defineProperty(navigator, 'language', { configurable: true, get: () => languages[0] });
  Object.defineProperty(navigator, 'languages', { configurable: true, get: () => languages });
}
