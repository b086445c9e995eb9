/**
 * The bubblewrap executor's dependency install step: whether it runs, and the lockfile check that keeps
 * its network traffic to one registry. Only npm installs; the command itself runs in bubblewrap.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { PackageManager, ValidationPlan } from './types.js';

export type InstallMode = 'off' | 'registry';

export interface InstallSettings {
  /** `off` (default): no install step, commands run offline. `registry`: `npm ci` from `registry` first. */
  mode: InstallMode;
  /** The registry URL; every `resolved` URL of the lockfile must be under it. */
  registry: string;
  /** Time limit of the install, within the run's own (default 5 minutes). */
  timeoutMs?: number;
}

export const DEFAULT_INSTALL_TIMEOUT_MS = 5 * 60_000;

/** The registry URL as a prefix: parsed, with exactly one trailing slash. */
export function registryPrefix(registry: string): string {
  const u = new URL(registry);
  u.search = '';
  u.hash = '';
  return `${u.href.replace(/\/+$/, '')}/`;
}

/** `npm ci` with lifecycle scripts off and the registry on the command line (a committed .npmrc cannot move it). */
export function npmCiArgv(registry: string): string[] {
  return ['npm', 'ci', '--ignore-scripts', '--no-audit', '--no-fund', '--registry', registryPrefix(registry)];
}

type LockEntry = {
  version?: unknown;
  resolved?: unknown;
  link?: unknown;
  dependencies?: unknown;
};

/** A `resolved` (or v1 `version`) that fetches from `prefix`, or that needs no fetch at all. */
function underRegistry(resolved: string, prefix: string): boolean {
  let u: URL;
  try {
    u = new URL(resolved);
  } catch {
    return false;
  }
  if (u.username || u.password) return false;
  return u.href.startsWith(prefix);
}

/** A workspace link inside the checkout (`packages/a`): nothing is fetched for it. */
function insideLink(resolved: string): boolean {
  if (resolved === '' || path.posix.isAbsolute(resolved) || /^[a-z][a-z0-9+.-]*:/i.test(resolved))
    return false;
  const n = path.posix.normalize(resolved);
  return n !== '..' && !n.startsWith('../');
}

/**
 * Lockfile entries that would be fetched from anywhere but the registry (git, file:, tarballs on other
 * hosts, URLs with credentials): `name -> what it resolves to`. Entries without `resolved` are fetched
 * from the configured registry, which is the one on the command line. Both the v2/v3 `packages` map and
 * the v1 `dependencies` tree are read. A lockfile that does not parse gives one entry saying so.
 */
export function lockfileOutsideRegistry(lockText: string, registry: string): string[] {
  const prefix = registryPrefix(registry);
  let lock: { packages?: unknown; dependencies?: unknown };
  try {
    lock = JSON.parse(lockText) as typeof lock;
  } catch {
    return ['(lockfile): not valid JSON'];
  }
  if (!lock || typeof lock !== 'object') return ['(lockfile): not an object'];
  const out: string[] = [];
  const isObj = (x: unknown): x is Record<string, unknown> => !!x && typeof x === 'object';
  const isEntry = (x: unknown): x is LockEntry => isObj(x);
  if (isObj(lock.packages)) {
    for (const [key, e] of Object.entries(lock.packages)) {
      if (key === '' || !isEntry(e)) continue;
      const resolved = e.resolved;
      if (resolved === undefined) continue;
      if (typeof resolved !== 'string') {
        out.push(`${key}: resolved is not a string`);
        continue;
      }
      if (e.link === true ? insideLink(resolved) : underRegistry(resolved, prefix)) continue;
      out.push(`${key}: ${resolved}`);
    }
  }
  const walk = (deps: unknown, trail: string) => {
    if (!isObj(deps)) return;
    for (const [name, e] of Object.entries(deps)) {
      if (!isEntry(e)) continue;
      const where = `${trail}${name}`;
      if (typeof e.resolved === 'string') {
        if (!underRegistry(e.resolved, prefix)) out.push(`${where}: ${e.resolved}`);
      } else if (typeof e.version === 'string' && /[:/]/.test(e.version)) {
        // v1 records git, file: and URL dependencies in `version`.
        out.push(`${where}: ${e.version}`);
      }
      walk(e.dependencies, `${where} > `);
    }
  };
  walk(lock.dependencies, '');
  return [...new Set(out)];
}

export type InstallDecision =
  /** Mode off: today's offline behaviour. */
  | { kind: 'off' }
  /** No install for a reason the note gives; the commands run offline. */
  | { kind: 'not_installed'; note: string; packageManager?: PackageManager }
  /** The lockfile reaches outside the registry; the commands run offline. */
  | { kind: 'refused'; note: string; packageManager: 'npm'; registry: string; outside: string[] }
  | { kind: 'install'; argv: string[]; registry: string; packageManager: 'npm'; lockfile: string };

function isFile(p: string): boolean {
  try {
    return fs.lstatSync(p).isFile();
  } catch {
    return false;
  }
}

function exists(p: string): boolean {
  try {
    fs.lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

export function refusedNote(n: number, registry: string): string {
  return `install refused: ${n} ${n === 1 ? 'dependency resolves' : 'dependencies resolve'} outside ${registryPrefix(registry)}; commands ran offline`;
}

/**
 * What the install step does for this plan and checkout (the scratch copy). `binaryOnPath` answers whether
 * a package manager's binary exists where the sandbox looks.
 */
export function decideInstall(
  plan: Extract<ValidationPlan, { kind: 'run' }>,
  dir: string,
  settings: InstallSettings | undefined,
  binaryOnPath: (name: string) => boolean,
): InstallDecision {
  if (!settings || settings.mode !== 'registry') return { kind: 'off' };
  const pm = plan.packageManager;
  const notInstalled = (why: string): InstallDecision => ({
    kind: 'not_installed',
    ...(pm ? { packageManager: pm } : {}),
    note: `not installed: ${why}; commands ran offline`,
  });
  if (!pm) return notInstalled('the plan names no package manager');
  if (exists(path.join(dir, 'node_modules'))) return notInstalled('node_modules is present in the checkout');
  if (pm !== 'npm') {
    return notInstalled(binaryOnPath(pm) ? `${pm} install is not supported (npm only)` : `${pm} unavailable`);
  }
  if (!binaryOnPath('npm')) return notInstalled('npm unavailable');
  // npm ci reads npm-shrinkwrap.json before package-lock.json.
  const lockfile = ['npm-shrinkwrap.json', 'package-lock.json'].find((f) => isFile(path.join(dir, f)));
  if (!lockfile) return notInstalled('no package-lock.json (npm ci needs a lockfile)');
  const outside = lockfileOutsideRegistry(
    fs.readFileSync(path.join(dir, lockfile), 'utf8'),
    settings.registry,
  );
  if (outside.length > 0) {
    return {
      kind: 'refused',
      note: refusedNote(outside.length, settings.registry),
      packageManager: 'npm',
      registry: registryPrefix(settings.registry),
      outside,
    };
  }
  return {
    kind: 'install',
    argv: npmCiArgv(settings.registry),
    registry: registryPrefix(settings.registry),
    packageManager: 'npm',
    lockfile,
  };
}
