// Functions that run in the page, for the tests' and benches' metrics:
// Playwright's evaluate and WebDriver's execute both take them as they are.

// Where the page's startup time went, in ms since navigation start: the
// navigation timing and the UI's own `kip:*` marks (ui/src/main.ts and
// seedGraph in ui/src/lib/state.svelte.ts).
export function startupMarks() {
  const nav = performance.getEntriesByType('navigation')[0];
  const marks = performance.getEntriesByType('mark').filter((m) => m.name.startsWith('kip:'));
  return {
    ...(nav ? { responseEnd: Math.round(nav.responseEnd), domContentLoaded: Math.round(nav.domContentLoadedEventEnd) } : {}),
    ...Object.fromEntries(marks.map((m) => [m.name.slice(4), Math.round(m.startTime)])),
  };
}

// Frame times over `duration` ms from requestAnimationFrame, summarised as
// p50/p95/max. `done` receives the summary.
export function measureFrames(duration, done) {
  const times = [];
  let last = performance.now();
  const end = last + duration;
  const tick = (now) => {
    times.push(now - last);
    last = now;
    if (now < end) requestAnimationFrame(tick);
    else {
      times.sort((a, b) => a - b);
      const q = (p) => Math.round(times[Math.min(times.length - 1, Math.floor(p * times.length))] * 10) / 10;
      done({ frames: times.length, p50: q(0.5), p95: q(0.95), max: q(1) });
    }
  };
  requestAnimationFrame(tick);
}

// Runs in the page: `n` wheel notches over the graph canvas, half in and
// half out, one every `gap` ms (the same events a mouse wheel sends).
export function wheelZoom(n, gap, done) {
  const el = document.querySelector('[data-testid=graph-canvas]');
  const target = el.querySelector('canvas:last-of-type') ?? el;
  const r = el.getBoundingClientRect();
  let i = 0;
  const step = () => {
    if (i >= n) return done();
    const deltaY = i < n / 2 ? -200 : 200;
    target.dispatchEvent(
      new WheelEvent('wheel', { deltaY, clientX: r.x + r.width / 2, clientY: r.y + r.height / 2, bubbles: true, cancelable: true }),
    );
    i++;
    setTimeout(step, gap);
  };
  step();
}
