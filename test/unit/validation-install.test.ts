/** The install step's decisions and lockfile check (no sandbox, no network). */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  decideInstall,
  lockfileOutsideRegistry,
  npmCiArgv,
  registryPrefix,
} from '../../src/validation/install.js';
import type { ValidationPlan } from '../../src/validation/types.js';

const REG = 'https://registry.npmjs.org/';
const plan = (pm?: 'npm' | 'pnpm' | 'yarn'): Extract<ValidationPlan, { kind: 'run' }> => ({
  kind: 'run',
  source: 'standard',
  ...(pm ? { packageManager: pm } : {}),
  commands: [{ check: 'test', ecosystem: 'javascript', argv: [pm ?? 'npm', 'run', 'test'] }],
});
const lock = (packages: Record<string, object>, extra: object = {}) =>
  JSON.stringify({ lockfileVersion: 3, packages: { '': { name: 'x' }, ...packages }, ...extra });

describe('lockfileOutsideRegistry', () => {
  it('accepts registry tarballs and entries without resolved (fetched from the configured registry)', () => {
    expect(
      lockfileOutsideRegistry(
        lock({
          'node_modules/a': { version: '1.0.0', resolved: `${REG}a/-/a-1.0.0.tgz` },
          'node_modules/@s/b': { version: '1.0.0', resolved: `${REG}@s/b/-/b-1.0.0.tgz` },
          'node_modules/c': { version: '1.0.0' },
          'node_modules/d': { version: '1.0.0', inBundle: true },
        }),
        REG,
      ),
    ).toEqual([]);
  });

  it('names git, file:, other hosts, look-alike hosts, credentials, other schemes', () => {
    const out = lockfileOutsideRegistry(
      lock({
        'node_modules/git': { resolved: 'git+ssh://git@github.com/o/r.git#abc' },
        'node_modules/file': { resolved: 'file:vendor/x.tgz' },
        'node_modules/other': { resolved: 'https://evil.example/x.tgz' },
        'node_modules/lookalike': { resolved: 'https://registry.npmjs.org.evil.example/x.tgz' },
        'node_modules/creds': { resolved: 'https://registry.npmjs.org@evil.example/x.tgz' },
        'node_modules/http': { resolved: 'http://registry.npmjs.org/x/-/x-1.0.0.tgz' },
        'node_modules/weird': { resolved: 42 },
      }),
      REG,
    );
    expect(out).toEqual([
      'node_modules/git: git+ssh://git@github.com/o/r.git#abc',
      'node_modules/file: file:vendor/x.tgz',
      'node_modules/other: https://evil.example/x.tgz',
      'node_modules/lookalike: https://registry.npmjs.org.evil.example/x.tgz',
      'node_modules/creds: https://registry.npmjs.org@evil.example/x.tgz',
      'node_modules/http: http://registry.npmjs.org/x/-/x-1.0.0.tgz',
      'node_modules/weird: resolved is not a string',
    ]);
  });

  it('a registry with a path is a prefix: sibling paths and dot segments leaving it are outside', () => {
    const reg = 'https://npm.example.com/repository/npm';
    expect(registryPrefix(reg)).toBe('https://npm.example.com/repository/npm/');
    expect(
      lockfileOutsideRegistry(
        lock({
          'node_modules/in': { resolved: 'https://npm.example.com/repository/npm/in/-/in-1.tgz' },
          'node_modules/out': { resolved: 'https://npm.example.com/repository/npm-evil/out/-/out-1.tgz' },
          'node_modules/dots': { resolved: 'https://npm.example.com/repository/npm/../other/x.tgz' },
          'node_modules/encoded': { resolved: 'https://npm.example.com/repository/npm/%2e%2e/other/x.tgz' },
        }),
        reg,
      ),
    ).toEqual([
      'node_modules/out: https://npm.example.com/repository/npm-evil/out/-/out-1.tgz',
      'node_modules/dots: https://npm.example.com/repository/npm/../other/x.tgz',
      'node_modules/encoded: https://npm.example.com/repository/npm/%2e%2e/other/x.tgz',
    ]);
  });

  it('workspace links inside the checkout pass; links leaving it do not', () => {
    expect(
      lockfileOutsideRegistry(
        lock({
          'node_modules/w': { resolved: 'packages/w', link: true },
          'node_modules/up': { resolved: '../outside', link: true },
          'node_modules/abs': { resolved: '/etc', link: true },
        }),
        REG,
      ),
    ).toEqual(['node_modules/up: ../outside', 'node_modules/abs: /etc']);
  });

  it('reads the v1 dependencies tree, git/file versions included', () => {
    const v1 = JSON.stringify({
      lockfileVersion: 1,
      dependencies: {
        ok: { version: '1.0.0', resolved: `${REG}ok/-/ok-1.0.0.tgz` },
        g: { version: 'github:o/r#abc' },
        p: {
          version: '1.0.0',
          resolved: `${REG}p/-/p-1.0.0.tgz`,
          dependencies: { q: { version: '1.0.0', resolved: 'https://evil.example/q.tgz' } },
        },
      },
    });
    expect(lockfileOutsideRegistry(v1, REG)).toEqual([
      'g: github:o/r#abc',
      'p > q: https://evil.example/q.tgz',
    ]);
  });

  it('a lockfile that does not parse is refused', () => {
    expect(lockfileOutsideRegistry('{', REG)).toEqual(['(lockfile): not valid JSON']);
  });
});

describe('decideInstall', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-install-unit-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  const all = () => true;
  const on = { mode: 'registry' as const, registry: REG };

  it('off (or no settings): today’s offline behaviour', () => {
    fs.writeFileSync(path.join(dir, 'package-lock.json'), lock({}));
    expect(decideInstall(plan('npm'), dir, undefined, all)).toEqual({ kind: 'off' });
    expect(decideInstall(plan('npm'), dir, { mode: 'off', registry: REG }, all)).toEqual({ kind: 'off' });
  });

  it('npm with a clean lockfile and no node_modules: npm ci from the registry, scripts off', () => {
    fs.writeFileSync(path.join(dir, 'package-lock.json'), lock({}));
    expect(decideInstall(plan('npm'), dir, on, all)).toEqual({
      kind: 'install',
      argv: npmCiArgv(REG),
      registry: REG,
      packageManager: 'npm',
      lockfile: 'package-lock.json',
    });
    expect(npmCiArgv('http://127.0.0.1:1')).toEqual([
      'npm',
      'ci',
      '--ignore-scripts',
      '--no-audit',
      '--no-fund',
      '--registry',
      'http://127.0.0.1:1/',
    ]);
  });

  it('refuses a lockfile reaching elsewhere, with the count and the registry', () => {
    fs.writeFileSync(
      path.join(dir, 'package-lock.json'),
      lock({ 'node_modules/x': { resolved: 'https://evil.example/x.tgz' } }),
    );
    expect(decideInstall(plan('npm'), dir, on, all)).toMatchObject({
      kind: 'refused',
      note: `install refused: 1 dependency resolves outside ${REG}; commands ran offline`,
      outside: ['node_modules/x: https://evil.example/x.tgz'],
    });
  });

  it('not installed: node_modules present, no lockfile, a lockfile that is a symlink, no JS project', () => {
    expect(decideInstall(plan('npm'), dir, on, all)).toMatchObject({
      kind: 'not_installed',
      note: 'not installed: no package-lock.json (npm ci needs a lockfile); commands ran offline',
    });
    fs.symlinkSync('/etc/hostname', path.join(dir, 'package-lock.json'));
    expect(decideInstall(plan('npm'), dir, on, all)).toMatchObject({ kind: 'not_installed' });
    fs.rmSync(path.join(dir, 'package-lock.json'));
    fs.writeFileSync(path.join(dir, 'package-lock.json'), lock({}));
    fs.mkdirSync(path.join(dir, 'node_modules'));
    expect(decideInstall(plan('npm'), dir, on, all)).toMatchObject({
      kind: 'not_installed',
      note: 'not installed: node_modules is present in the checkout; commands ran offline',
    });
    expect(decideInstall(plan(), dir, on, all)).toMatchObject({
      kind: 'not_installed',
      note: 'not installed: the plan names no package manager; commands ran offline',
    });
  });

  it('pnpm and yarn: unavailable when their binary is missing, otherwise not supported (npm only)', () => {
    expect(decideInstall(plan('pnpm'), dir, on, () => false)).toMatchObject({
      kind: 'not_installed',
      note: 'not installed: pnpm unavailable; commands ran offline',
    });
    expect(decideInstall(plan('yarn'), dir, on, () => true)).toMatchObject({
      kind: 'not_installed',
      note: 'not installed: yarn install is not supported (npm only); commands ran offline',
    });
  });
});
