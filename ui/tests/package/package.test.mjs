// The desktop package that scripts/package.sh builds: its control fields and
// contents (dpkg-deb), then the binaries extracted from it — `kip` on a temp
// nexus and the `kip-explorer` window over WebDriver (as the desktop test
// opens it), with a screenshot. Run under Xvfb (scripts/test.sh does).
// KIP_DEB names the package; else the one in the target folder.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, readdirSync, rmSync, existsSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repo, screenshots } from '../e2e/harness.mjs';

const PORT = 15444 + 2 * (process.pid % 1000);
const version = /^version = "(.+)"$/m.exec(readFileSync(join(repo, 'Cargo.toml'), 'utf8'))[1];
const debDir = join(process.env.CARGO_TARGET_DIR ?? join(repo, 'target'), 'release/bundle/deb');
const deb = process.env.KIP_DEB ?? join(debDir, `kip-explorer_${version}_amd64.deb`);
// Every size of icons/, by the hicolor folder the package puts it in.
const iconSizes = [16, 24, 32, 48, 64, 128, 256, 512];

let dir;
let root;

const run = (bin, args, opts = {}) => execFileSync(bin, args, { encoding: 'utf8', ...opts });

before(() => {
  if (!existsSync(deb)) throw new Error(`the package is missing at ${deb} (./scripts/package.sh builds it)`);
  dir = mkdtempSync(join(tmpdir(), 'kip-package-'));
  root = join(dir, 'root');
  run('dpkg-deb', ['-x', deb, root]);
});

after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The control fields of the package, as an object. */
function control() {
  const fields = {};
  let last;
  for (const line of run('dpkg-deb', ['-f', deb]).split('\n')) {
    const m = /^([A-Za-z-]+): (.*)$/.exec(line);
    if (m) fields[(last = m[1])] = m[2];
    else if (line.startsWith(' ') && last) fields[last] += `\n${line}`;
  }
  return fields;
}

/** A PNG's width and height, from its IHDR chunk. */
function pngSize(path) {
  const b = readFileSync(path);
  assert.equal(b.toString('latin1', 1, 4), 'PNG', `${path} is not a PNG`);
  return [b.readUInt32BE(16), b.readUInt32BE(20)];
}

/** The [Desktop Entry] group of a .desktop file, as an object. */
function desktopEntry(path) {
  const entry = {};
  let inGroup = false;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line.startsWith('[')) inGroup = line.trim() === '[Desktop Entry]';
    else if (inGroup && line.includes('=')) entry[line.slice(0, line.indexOf('='))] = line.slice(line.indexOf('=') + 1);
  }
  return entry;
}

test('the control fields name the package, its version and what it needs at run time', () => {
  const c = control();
  assert.equal(c.Package, 'kip-explorer');
  assert.equal(c.Version, version);
  assert.equal(c.Architecture, 'amd64');
  assert.match(c.Description, /KIP/);
  assert.ok(Number(c['Installed-Size']) > 0);
  assert.match(c.Recommends, /fonts-noto-color-emoji/);
  const depends = c.Depends.split(',').map((d) => d.trim().split(' ')[0]);
  for (const pkg of ['libwebkit2gtk-4.1-0', 'libgtk-3-0', 'libc6']) assert.ok(depends.includes(pkg), `Depends lacks ${pkg}: ${c.Depends}`);
});

test('the package holds both binaries, the desktop entry and every icon size, owned by root', () => {
  const listing = run('dpkg-deb', ['-c', deb]).trim().split('\n');
  const entries = new Map(listing.map((l) => {
    const [mode, owner, , , , ...rest] = l.split(/\s+/);
    return [rest.join(' ').replace(/^\.\//, '/'), { mode, owner }];
  }));
  for (const bin of ['/usr/bin/kip-explorer', '/usr/bin/kip']) {
    assert.equal(entries.get(bin)?.mode, '-rwxr-xr-x', `${bin} is missing or not executable`);
  }
  assert.ok(entries.has('/usr/share/applications/KIP Explorer.desktop') || [...entries.keys()].some((p) => /^\/usr\/share\/applications\/[^/]+\.desktop$/.test(p)));
  for (const size of iconSizes) {
    assert.ok(entries.has(`/usr/share/icons/hicolor/${size}x${size}/apps/kip-explorer.png`), `no ${size}x${size} icon`);
  }
  for (const [path, { owner }] of entries) assert.match(owner, /^(root\/root|0\/0)$/, `${path} is owned by ${owner}`);
  // Nothing outside /usr: no file of the build machine leaks into the package.
  for (const path of entries.keys()) assert.match(path, /^\/(usr(\/.*)?)?$/, `unexpected ${path}`);
});

test('the desktop entry starts kip-explorer with the app icon, and each icon has its folder size', () => {
  const apps = join(root, 'usr/share/applications');
  const files = readdirSync(apps).filter((f) => f.endsWith('.desktop'));
  assert.equal(files.length, 1, `desktop entries: ${files}`);
  const entry = desktopEntry(join(apps, files[0]));
  assert.equal(entry.Type, 'Application');
  assert.equal(entry.Name, 'KIP Explorer');
  assert.equal(entry.Exec.split(' ')[0], 'kip-explorer');
  assert.equal(entry.Icon, 'kip-explorer');
  assert.match(entry.Categories, /Development/);
  for (const size of iconSizes) {
    const icon = join(root, `usr/share/icons/hicolor/${size}x${size}/apps/${entry.Icon}.png`);
    assert.deepEqual(pngSize(icon), [size, size], icon);
  }
  // The 256 px icon is icons/icon.png as it is.
  assert.ok(readFileSync(join(root, 'usr/share/icons/hicolor/256x256/apps/kip-explorer.png')).equals(readFileSync(join(repo, 'icons/icon.png'))));
});

test('the packaged binaries find every shared library they link', () => {
  for (const bin of ['kip', 'kip-explorer']) {
    const ldd = run('ldd', [join(root, 'usr/bin', bin)]);
    assert.doesNotMatch(ldd, /not found/, `${bin}: ${ldd}`);
  }
});

test('the packaged kip runs: --version, import and exec on a temp nexus', () => {
  const kip = join(root, 'usr/bin/kip');
  assert.equal(run(kip, ['--version']).trim(), `kip ${version}`);
  const db = join(dir, 'kip-nexus');
  run(kip, ['--db', db, 'import', join(repo, 'capsules/examples/10_medical_schema.kip'), join(repo, 'capsules/examples/11_medical_data.kip')]);
  const out = JSON.parse(run(kip, ['--db', db, 'exec', 'FIND(?d.name) WHERE { ?d {type: "Drug"} } ORDER BY ?d.name LIMIT 3']));
  assert.deepEqual(out.result, ['Aspirin', 'Ibuprofen', 'Mefenamic Acid']);
});

test('the packaged kip-explorer opens its window on a nexus and paints the graph', async () => {
  const app = join(root, 'usr/bin/kip-explorer');
  assert.match(run(app, ['--help']), /--db/);
  const db = join(dir, 'window-nexus');
  const kip = join(root, 'usr/bin/kip');
  run(kip, ['--db', db, 'import', join(repo, 'capsules/examples/10_medical_schema.kip'), join(repo, 'capsules/examples/11_medical_data.kip')]);
  const capsules = join(dir, 'capsules');
  mkdirSync(capsules);
  // window.mjs reads which binary to open when it loads.
  process.env.KIP_EXPLORER_BIN = app;
  const { openWindow } = await import('../desktop/window.mjs');
  const desktop = await openWindow(PORT, ['--db', db, '--capsules', capsules]);
  try {
    const { browser } = desktop;
    const path = await browser.$('[data-testid=nexus-path]');
    await path.waitForExist({ timeout: 30_000 });
    await browser.waitUntil(async () => (await path.getText()).includes('window-nexus'), { timeout: 30_000, timeoutMsg: 'the nexus path is not shown' });
    assert.match(await browser.getTitle(), /KIP Explorer — .*window-nexus/);
    await browser.waitUntil(() => browser.execute(() => (window.kipExplorer?.graphNodes?.() ?? []).length > 0), {
      timeout: 30_000,
      timeoutMsg: 'the graph never painted',
    });
    await browser.waitUntil(() => browser.execute(() => !window.kipExplorer.layoutRunning()), { timeout: 30_000, timeoutMsg: 'the layout never settled' });
    await browser.executeAsync((done) => requestAnimationFrame(() => requestAnimationFrame(() => done())));
    mkdirSync(screenshots, { recursive: true });
    const shot = join(screenshots, 'package-01-window.png');
    await browser.saveScreenshot(shot);
    assert.ok(statSync(shot).size > 10_000, 'the screenshot is (nearly) empty');
  } finally {
    await desktop.stop();
  }
});
