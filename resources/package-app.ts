// `npm run package`: the desktop app as a folder you can ship. Builds out/, packs it into
// resources/app.asar beside a copy of node_modules/electron/dist, and flips Electron's fuses on
// that copy. Code-signing comes after this step (it seals the fuses), and is not done here.
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createPackage, getRawHeader } from '@electron/asar';
import { flipFuses, FuseV1Options, FuseVersion, getCurrentFuseWire, type FuseConfig } from '@electron/fuses';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Every fuse set explicitly (strictlyRequireAllFuses), so an Electron upgrade that adds one fails
 * packaging until someone decides it.
 */
export const FUSES = {
  version: FuseVersion.V1,
  strictlyRequireAllFuses: true,
  // ELECTRON_RUN_AS_NODE would turn the signed binary into a plain Node for anyone. The app uses
  // worker threads, never child_process.fork, so it needs none of this.
  [FuseV1Options.RunAsNode]: false,
  // The window keeps no cookies worth reading, but any it ever keeps are encrypted at rest.
  [FuseV1Options.EnableCookieEncryption]: true,
  [FuseV1Options.EnableNodeOptionsEnvironmentVariable]: false,
  [FuseV1Options.EnableNodeCliInspectArguments]: false,
  // Together: only resources/app.asar runs, and only if its header matches the packaged hash.
  [FuseV1Options.EnableEmbeddedAsarIntegrityValidation]: true,
  [FuseV1Options.OnlyLoadAppFromAsar]: true,
  [FuseV1Options.LoadBrowserProcessSpecificV8Snapshot]: false,
  // Stays on: the console page is loaded from file:// (inside app.asar).
  [FuseV1Options.GrantFileProtocolExtraPrivileges]: true,
  [FuseV1Options.WasmTrapHandlers]: true,
} satisfies FuseConfig;

export class PackageError extends Error {}

/** Where the executable sits inside an Electron dist folder, per platform. */
export function electronExecutable(dist: string, platform: NodeJS.Platform = process.platform): string {
  if (platform === 'darwin') return join(dist, 'Electron.app');
  return join(dist, platform === 'win32' ? 'electron.exe' : 'electron');
}

/** Flips FUSES on one Electron binary (or .app): the packaging step's last write. */
export async function applyFuses(binary: string): Promise<void> {
  await flipFuses(binary, FUSES);
}

/** The fuse wire as the binary now has it, fuse name → enabled. */
export async function readFuses(binary: string): Promise<Record<string, boolean>> {
  const wire = await getCurrentFuseWire(binary);
  const out: Record<string, boolean> = {};
  for (const [key, state] of Object.entries(wire)) {
    const name = FuseV1Options[Number(key)];
    if (name !== undefined) out[name] = state === 0x31;
  }
  return out;
}

export interface PackageOptions {
  /** electron-vite's output (main/, preload/, renderer/). */
  buildDir: string;
  /** An Electron dist folder for this platform. */
  electronDist: string;
  /** Where the packaged app goes; replaced if present. */
  dest: string;
  platform?: NodeJS.Platform;
}

function addAsarIntegrity(infoPlist: string, asar: string): void {
  const xml = readFileSync(infoPlist, 'utf8');
  const end = xml.lastIndexOf('</dict>');
  if (!xml.startsWith('<?xml') || end < 0) throw new PackageError(`${infoPlist} is not an XML property list; cannot record the app.asar hash`);
  const hash = createHash('sha256').update(getRawHeader(asar).headerString).digest('hex');
  const entry = `<key>ElectronAsarIntegrity</key><dict><key>Resources/app.asar</key><dict><key>algorithm</key><string>SHA256</string><key>hash</key><string>${hash}</string></dict></dict>\n`;
  writeFileSync(infoPlist, xml.slice(0, end) + entry + xml.slice(end));
}

/** Assembles the app folder and returns the path of its (fused) executable. */
export async function packageApp(o: PackageOptions): Promise<string> {
  const platform = o.platform ?? process.platform;
  const source = electronExecutable(o.electronDist, platform);
  if (!existsSync(source)) {
    throw new PackageError(`the Electron binary is missing (${source}); it is downloaded by npm install, which needs network access to GitHub`);
  }
  // With the integrity fuse on, Windows refuses to start without an Integrity resource in the
  // .exe; writing one needs a PE resource editor this script does not carry.
  if (platform === 'win32') throw new PackageError('packaging for Windows is not supported by this script (the app.asar integrity resource must be embedded in electron.exe)');
  for (const need of ['main/index.js', 'preload/index.cjs', 'renderer/index.html']) {
    if (!existsSync(join(o.buildDir, need))) throw new PackageError(`${join(o.buildDir, need)} is missing: run npm run build first`);
  }
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string; description?: string };

  rmSync(o.dest, { recursive: true, force: true });
  cpSync(o.electronDist, o.dest, { recursive: true, verbatimSymlinks: true });
  const resources = platform === 'darwin' ? join(o.dest, 'Electron.app', 'Contents', 'Resources') : join(o.dest, 'resources');
  // Electron's sample app must not be a fallback: OnlyLoadAppFromAsar makes app.asar the only one.
  rmSync(join(resources, 'default_app.asar'), { force: true });

  const stage = mkdtempSync(join(tmpdir(), 'switchboard-app-'));
  try {
    cpSync(o.buildDir, join(stage, 'out'), { recursive: true });
    const manifest = { name: pkg.name, productName: 'Switchboard', version: pkg.version, description: pkg.description, type: 'module', main: 'out/main/index.js' };
    writeFileSync(join(stage, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    await createPackage(stage, join(resources, 'app.asar'));
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }

  let executable = electronExecutable(o.dest, platform);
  if (platform === 'darwin') {
    addAsarIntegrity(join(executable, 'Contents', 'Info.plist'), join(resources, 'app.asar'));
  } else {
    const named = join(o.dest, pkg.name);
    renameSync(executable, named);
    executable = named;
  }
  await applyFuses(executable);
  return executable;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'electron-dist': { type: 'string' },
      'build-dir': { type: 'string' },
      dest: { type: 'string' },
      'skip-build': { type: 'boolean' },
    },
    strict: true,
  });
  const electronDist = resolve(values['electron-dist'] ?? process.env['ELECTRON_OVERRIDE_DIST_PATH'] ?? join(ROOT, 'node_modules', 'electron', 'dist'));
  const buildDir = resolve(values['build-dir'] ?? join(ROOT, 'out'));
  const dest = resolve(values.dest ?? join(ROOT, 'dist', `switchboard-${process.platform}-${process.arch}`));
  // Checked before the build so a machine without Electron fails in a second, with one line.
  if (!existsSync(electronExecutable(electronDist))) {
    throw new PackageError(`the Electron binary is missing (${electronExecutable(electronDist)}); it is downloaded by npm install, which needs network access to GitHub`);
  }
  if (!values['skip-build']) {
    const build = spawnSync(process.execPath, [join(ROOT, 'node_modules/electron-vite/bin/electron-vite.js'), 'build', '--logLevel', 'warn', '--outDir', buildDir], { cwd: ROOT, stdio: 'inherit' });
    if (build.status !== 0) throw new PackageError('the build failed; see above');
  }
  const executable = await packageApp({ buildDir, electronDist, dest });
  const fuses = await readFuses(executable);
  console.log(`switchboard: packaged ${executable}`);
  console.log(`switchboard: fuses ${Object.entries(fuses).map(([k, v]) => `${k}=${v ? 'on' : 'off'}`).join(' ')}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error: unknown) => {
    console.error(`switchboard: cannot package: ${error instanceof PackageError ? error.message : (error as Error).stack}`);
    process.exit(1);
  });
}
