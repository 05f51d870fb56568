// Opens the real `kip-explorer` window over WebDriver: tauri-driver (in its
// own process group, so WebKitWebDriver, its child, goes with it) on a port
// of our own and its native port next to it, so a stray driver elsewhere
// cannot answer. Shared by the desktop test and the desktop bench.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { remote } from 'webdriverio';
import { repo } from '../e2e/harness.mjs';

export const appBin = process.env.KIP_EXPLORER_BIN ?? join(repo, 'target/debug/kip-explorer');
export const driverBin = process.env.TAURI_DRIVER ?? join(repo, '.tools/bin/tauri-driver');

async function waitForPort(port, ms) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    try {
      const r = await fetch(`http://127.0.0.1:${port}/status`);
      if (r.ok) return;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`tauri-driver did not listen on ${port}`);
}

/**
 * Starts tauri-driver on `port` (and `port + 1`), then the window with
 * `args`; resolves to {browser, launchedAt, stop}. `launchedAt` is when
 * the window was asked for. `configDir` is where the app keeps its
 * preferences (`$KIP_CONFIG_DIR`; default: a fresh folder, never the user's).
 * The window runs under `LC_ALL=C`, a bare Debian root session's locale,
 * where WebKitGTK reports `navigator.language` as "C" (see src/lib/locale.ts).
 */
export async function openWindow(port, args, { connectionRetryTimeout = 60_000, configDir = mkdtempSync(join(tmpdir(), 'kip-explorer-config-')) } = {}) {
  for (const [what, path] of [['kip-explorer', appBin], ['tauri-driver', driverBin]]) {
    if (!existsSync(path)) throw new Error(`${what} is missing at ${path} (scripts/test.sh builds and installs it)`);
  }
  const driver = spawn(driverBin, ['--port', String(port), '--native-port', String(port + 1)], {
    stdio: 'ignore',
    detached: true,
    env: { ...process.env, KIP_CONFIG_DIR: configDir, LC_ALL: 'C', LANG: 'C' },
  });
  const exited = new Promise((resolve) => {
    if (driver.exitCode !== null || driver.signalCode !== null) resolve();
    else driver.once('exit', resolve);
  });
  // Ends the driver's group and waits for the driver to be gone (SIGKILL
  // after 5 s), so a window opened next on the same port never races the
  // old driver for it.
  const stopDriver = async () => {
    try {
      process.kill(-driver.pid, 'SIGTERM');
    } catch {
      return; /* already gone */
    }
    const timer = setTimeout(() => {
      try {
        process.kill(-driver.pid, 'SIGKILL');
      } catch {
        /* gone meanwhile */
      }
    }, 5000);
    await exited;
    clearTimeout(timer);
  };
  try {
    await waitForPort(port, 20_000);
    const launchedAt = Date.now();
    const browser = await remote({
      hostname: '127.0.0.1',
      port,
      logLevel: 'error',
      connectionRetryTimeout,
      capabilities: { 'tauri:options': { application: appBin, args } },
    });
    return {
      browser,
      launchedAt,
      async stop() {
        await browser.deleteSession().catch(() => {});
        await stopDriver();
      },
    };
  } catch (e) {
    await stopDriver();
    throw e;
  }
}
