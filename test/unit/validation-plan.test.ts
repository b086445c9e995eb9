import path from 'node:path';
import { NO_STANDARD_SCRIPTS, planValidation, SKIPPED_DOCS_ONLY } from '../../src/validation/plan.js';

const files = (entries: Record<string, string>) => ({ files: new Map(Object.entries(entries)) });
const pkg = (scripts: Record<string, string>) => JSON.stringify({ name: 'x', scripts });
const argvs = (plan: ReturnType<typeof planValidation>) => plan.commands.map((c) => c.argv.join(' '));

describe('planValidation', () => {
  it('JavaScript: the standard scripts present, with npm from package-lock.json', () => {
    const plan = planValidation(
      files({
        'package.json': pkg({
          test: 'jest',
          lint: 'eslint .',
          build: 'tsc',
          start: 'node .',
          typecheck: ' ',
        }),
        'package-lock.json': '{}',
      }),
      ['src/a.ts'],
    );
    expect(plan).toMatchObject({ kind: 'run', source: 'standard', packageManager: 'npm' });
    expect(argvs(plan)).toEqual(['npm run test', 'npm run lint', 'npm run build']);
    expect(plan.commands.map((c) => c.check)).toEqual(['test', 'lint', 'build']);
  });

  it.each([
    ['pnpm-lock.yaml', 'pnpm'],
    ['yarn.lock', 'yarn'],
    ['bun.lockb', 'bun'],
  ])('JavaScript: %s selects %s', (lock, pm) => {
    const plan = planValidation(files({ 'package.json': pkg({ test: 't', typecheck: 'tsc' }), [lock]: '' }), [
      'a.js',
    ]);
    expect(plan).toMatchObject({ kind: 'run', packageManager: pm });
    expect(argvs(plan)).toEqual([`${pm} run test`, `${pm} run typecheck`]);
  });

  it('Python: pytest from tests/, mypy and ruff when configured', () => {
    const plan = planValidation(
      files({
        'pyproject.toml':
          '[project]\nname = "x"\n[tool.mypy]\nstrict = true\n[tool.ruff]\nline-length = 100\n',
        'tests/test_a.py': 'def test_a(): pass',
      }),
      ['x/a.py'],
    );
    expect(argvs(plan)).toEqual(['python3 -m pytest', 'mypy .', 'ruff check .']);
    expect(plan.commands.map((c) => c.check)).toEqual(['test', 'typecheck', 'lint']);
  });

  it('Python: pytest from pytest.ini alone; nothing configured gives no plan', () => {
    expect(argvs(planValidation(files({ 'pytest.ini': '[pytest]\n' }), ['a.py']))).toEqual([
      'python3 -m pytest',
    ]);
    expect(planValidation(files({ 'requirements.txt': 'requests\n' }), ['a.py'])).toEqual({
      kind: 'none',
      reason: NO_STANDARD_SCRIPTS,
      commands: [],
    });
  });

  it('Go: go test ./... and go vet ./...', () => {
    const plan = planValidation(files({ 'go.mod': 'module x\n', 'main.go': 'package main' }), ['main.go']);
    expect(argvs(plan)).toEqual(['go test ./...', 'go vet ./...']);
  });

  it('none: "no standard test/typecheck/lint/build scripts"', () => {
    const plan = planValidation(files({ 'package.json': pkg({ start: 'node .' }), Makefile: 'all:' }), [
      'a.c',
    ]);
    expect(plan).toEqual({
      kind: 'none',
      reason: 'no standard test/typecheck/lint/build scripts',
      commands: [],
    });
    expect(planValidation(files({ 'package.json': '{not json' }), ['a.js']).kind).toBe('none');
  });

  it('reads a directory checkout (a fixture)', () => {
    const plan = planValidation({ dir: path.resolve('fixtures/validation/passing') }, ['sum.js']);
    expect(plan).toMatchObject({ kind: 'run', packageManager: 'npm' });
    expect(argvs(plan)).toEqual(['npm run test']);
  });

  const repo = files({ 'package.json': pkg({ test: 't' }) });

  it.each([
    [['README.md', 'docs/guide.txt', 'LICENSE']],
    [['package-lock.json', 'dist/app.min.js']],
    [['CHANGELOG.md', 'api/__generated__/types.ts', 'proto/x.pb.go']],
  ])('skips docs-only and generated-only changes: %j', (changed) => {
    expect(planValidation(repo, changed)).toEqual({
      kind: 'skipped',
      reason: SKIPPED_DOCS_ONLY,
      commands: [],
    });
  });

  it('runs when any changed path is code', () => {
    expect(planValidation(repo, ['README.md', 'src/a.ts']).kind).toBe('run');
  });

  it('VERDICT_VALIDATION_CODE_CHANGES_ONLY: only exactly `false` disables the gate', () => {
    expect(planValidation(repo, ['README.md'], { codeChangesOnly: 'false' }).kind).toBe('run');
    for (const v of ['FALSE', 'False', '0', 'no', ' false', 'false ', '', 'true', undefined]) {
      expect(planValidation(repo, ['README.md'], { codeChangesOnly: v }).kind).toBe('skipped');
    }
  });

  it('repo-committed commands make a repo-config plan', () => {
    const plan = planValidation(repo, ['a.js'], {
      repoCommands: [{ check: 'test', argv: ['make', 'check'] }],
    });
    expect(plan).toEqual({
      kind: 'run',
      source: 'repo-config',
      commands: [{ check: 'test', ecosystem: 'custom', argv: ['make', 'check'] }],
    });
  });
});
