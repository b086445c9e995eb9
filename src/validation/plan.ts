/**
 * Validation plans (issue 26 item 1): which standard checks the repository at the PR head has.
 * Only the repository root is inspected (no workspace/monorepo discovery).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { CheckName, PackageManager, PlannedCommand, ValidationPlan } from './types.js';

export const NO_STANDARD_SCRIPTS = 'no standard test/typecheck/lint/build scripts';
export const SKIPPED_DOCS_ONLY = 'SKIPPED validation: docs-only or generated-only change';

export type RepoInput = { files: Map<string, string> } | { dir: string };

export interface PlanOptions {
  /** The raw value of VERDICT_VALIDATION_CODE_CHANGES_ONLY; only exactly `false` disables the docs/generated gate. */
  codeChangesOnly?: string | undefined;
  /** Commands from the repository's committed validation config (argv each); executors treat them as untrusted. */
  repoCommands?: { check: CheckName; argv: string[] }[];
}

interface RepoView {
  has(p: string): boolean;
  read(p: string): string | undefined;
  hasDir(p: string): boolean;
}

function view(repo: RepoInput): RepoView {
  if ('files' in repo) {
    const files = repo.files;
    return {
      has: (p) => files.has(p),
      read: (p) => files.get(p),
      hasDir: (p) => [...files.keys()].some((k) => k.startsWith(`${p}/`)),
    };
  }
  const abs = (p: string) => path.join(repo.dir, p);
  return {
    has: (p) => fs.existsSync(abs(p)),
    read: (p) => {
      try {
        return fs.readFileSync(abs(p), 'utf8');
      } catch {
        return undefined;
      }
    },
    hasDir: (p) => {
      try {
        return fs.statSync(abs(p)).isDirectory();
      } catch {
        return false;
      }
    },
  };
}

const DOC_EXT = /\.(md|mdx|markdown|rst|adoc|txt|png|jpe?g|gif|svg|webp)$/i;
const DOC_NAMES = /^(LICENSE|LICENCE|COPYING|NOTICE|AUTHORS|CHANGELOG|CHANGES|CODEOWNERS)(\.[a-z]+)?$/i;
const GENERATED = [
  /(^|\/)(package-lock\.json|pnpm-lock\.yaml|yarn\.lock|bun\.lockb|go\.sum|poetry\.lock|Cargo\.lock|uv\.lock)$/,
  /(^|\/)(dist|build|vendor|__generated__|generated)\//,
  /\.min\.(js|css)$/,
  /\.(generated|gen)\.[a-z]+$/,
  /\.pb\.go$/,
  /_pb2(_grpc)?\.py$/,
  /\.snap$/,
];

export function isDocPath(p: string): boolean {
  return /(^|\/)docs?\//.test(p) || DOC_EXT.test(p) || DOC_NAMES.test(path.posix.basename(p));
}
export function isGeneratedPath(p: string): boolean {
  return GENERATED.some((re) => re.test(p));
}

const JS_CHECKS: CheckName[] = ['test', 'typecheck', 'lint', 'build'];

function packageManager(v: RepoView): PackageManager {
  if (v.has('pnpm-lock.yaml')) return 'pnpm';
  if (v.has('yarn.lock')) return 'yarn';
  if (v.has('bun.lockb') || v.has('bun.lock')) return 'bun';
  return 'npm';
}

function jsCommands(v: RepoView): { pm?: PackageManager; commands: PlannedCommand[] } {
  const text = v.read('package.json');
  if (text === undefined) return { commands: [] };
  let scripts: Record<string, unknown> = {};
  try {
    const pkg = JSON.parse(text) as { scripts?: Record<string, unknown> };
    scripts = pkg.scripts && typeof pkg.scripts === 'object' ? pkg.scripts : {};
  } catch {
    return { commands: [] };
  }
  const pm = packageManager(v);
  const commands = JS_CHECKS.filter(
    (c) => typeof scripts[c] === 'string' && (scripts[c] as string).trim() !== '',
  ).map((check): PlannedCommand => ({ check, ecosystem: 'javascript', argv: [pm, 'run', check] }));
  return { pm, commands };
}

function pythonCommands(v: RepoView): PlannedCommand[] {
  const pyproject = v.read('pyproject.toml') ?? '';
  const setupCfg = v.read('setup.cfg') ?? '';
  const tox = v.read('tox.ini') ?? '';
  const isPython =
    pyproject !== '' ||
    setupCfg !== '' ||
    v.has('setup.py') ||
    v.has('requirements.txt') ||
    v.has('pytest.ini');
  if (!isPython) return [];
  const out: PlannedCommand[] = [];
  const pytest =
    v.hasDir('tests') ||
    v.has('pytest.ini') ||
    v.has('conftest.py') ||
    /\[tool\.pytest/.test(pyproject) ||
    /\bpytest\b/.test(pyproject) ||
    /\[tool:pytest\]/.test(setupCfg) ||
    /\[pytest\]/.test(tox);
  if (pytest) out.push({ check: 'test', ecosystem: 'python', argv: ['python3', '-m', 'pytest'] });
  const mypy =
    v.has('mypy.ini') || v.has('.mypy.ini') || /\[tool\.mypy\]/.test(pyproject) || /\[mypy\]/.test(setupCfg);
  if (mypy) out.push({ check: 'typecheck', ecosystem: 'python', argv: ['mypy', '.'] });
  const ruff = v.has('ruff.toml') || v.has('.ruff.toml') || /\[tool\.ruff/.test(pyproject);
  if (ruff) out.push({ check: 'lint', ecosystem: 'python', argv: ['ruff', 'check', '.'] });
  return out;
}

function goCommands(v: RepoView): PlannedCommand[] {
  if (!v.has('go.mod')) return [];
  return [
    { check: 'test', ecosystem: 'go', argv: ['go', 'test', './...'] },
    { check: 'lint', ecosystem: 'go', argv: ['go', 'vet', './...'] },
  ];
}

export function planValidation(
  repo: RepoInput,
  changedPaths: string[],
  opts: PlanOptions = {},
): ValidationPlan {
  const gate = opts.codeChangesOnly !== 'false';
  if (gate && changedPaths.length > 0 && changedPaths.every((p) => isDocPath(p) || isGeneratedPath(p))) {
    return { kind: 'skipped', reason: SKIPPED_DOCS_ONLY, commands: [] };
  }
  if (opts.repoCommands && opts.repoCommands.length > 0) {
    return {
      kind: 'run',
      source: 'repo-config',
      commands: opts.repoCommands.map((c) => ({ check: c.check, ecosystem: 'custom', argv: [...c.argv] })),
    };
  }
  const v = view(repo);
  const js = jsCommands(v);
  const commands = [...js.commands, ...pythonCommands(v), ...goCommands(v)];
  if (commands.length === 0) return { kind: 'none', reason: NO_STANDARD_SCRIPTS, commands: [] };
  return {
    kind: 'run',
    source: 'standard',
    ...(js.commands.length > 0 && js.pm ? { packageManager: js.pm } : {}),
    commands,
  };
}
