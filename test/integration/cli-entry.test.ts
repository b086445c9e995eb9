import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * `verdict` started the ways users start it (NAMES.md: `npx verdict <command>` from the project directory,
 * `npm run cli -- <command>`), offline. npx runs the package's bin through a `node_modules/.bin/verdict`
 * link, a path the entry must not care about.
 */

const ROOT = process.cwd();
type Result = { code: number | null; stdout: string; stderr: string };

function run(
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<Result> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      {
        cwd,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'silent', ...env },
        timeout: 150_000,
      },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'verdict-entry-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the verdict command as npx and npm run start it', () => {
  test('npx verdict --help in the project directory prints the help and exits 0', async () => {
    // A fresh npm cache, offline: npx links this project into it and runs its bin from there.
    const result = await run('npx', ['--offline', 'verdict', '--help'], ROOT, {
      npm_config_cache: join(dir, 'npm-cache'),
      npm_config_update_notifier: 'false',
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^verdict: the Verdict operator CLI\n\nUsage: verdict <command> \[options\]/,
    );
    expect(result.stdout).toContain('doctor [--offline]');
    expect(result.stdout).toContain('webhook send <event.action>');
  }, 180_000);

  test('npm run cli -- doctor --help prints the command help and exits 0', async () => {
    const result = await run('npm', ['run', '--silent', 'cli', '--', 'doctor', '--help'], ROOT, {
      npm_config_update_notifier: 'false',
    });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/^Usage: verdict doctor \[--offline\]/);
  }, 180_000);

  test('through the node_modules/.bin/verdict link of a project that installed it, reading that project’s .env', async () => {
    // The layout npm gives a dependency: node_modules/verdict and its bin linked in node_modules/.bin.
    const project = join(dir, 'project');
    mkdirSync(join(project, 'node_modules', '.bin'), { recursive: true });
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'uses-verdict', private: true, dependencies: { verdict: `file:${ROOT}` } }),
    );
    symlinkSync(ROOT, join(project, 'node_modules', 'verdict'));
    symlinkSync('../verdict/bin/verdict.mjs', join(project, 'node_modules', '.bin', 'verdict'));
    writeFileSync(
      join(project, '.env'),
      [
        `VERDICT_DB_PATH=${join(dir, 'data', 'verdict.sqlite')}`,
        'GITHUB_WEBHOOK_SECRET=from-dot-env',
        'APP_ID=123',
        'PRIVATE_KEY=not-a-key',
        '',
      ].join('\n'),
    );
    const result = await run(
      join(project, 'node_modules', '.bin', 'verdict'),
      ['doctor', '--offline'],
      project,
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(1);
    const lines = result.stdout.trimEnd().split('\n');
    for (const line of lines) expect(line).toMatch(/^(ok|warn|fail) [a-z-]+: \S/);
    expect(lines[0]).toBe('ok config: the configuration parses (the environment and .env)');
    expect(lines).toContain('ok webhook-secret: GITHUB_WEBHOOK_SECRET is set; webhooks are verified with it');
    expect(lines.find((l) => l.startsWith('fail github-app:'))).toMatch(
      /^fail github-app: PRIVATE_KEY is not a PEM private key \(.*\): set PRIVATE_KEY_PATH/,
    );
    // npx in that project finds the link and runs the same entry.
    const npx = await run('npx', ['--offline', 'verdict', 'webhook', '--help'], project, {
      npm_config_cache: join(dir, 'npm-cache'),
      npm_config_update_notifier: 'false',
    });
    expect(npx.code).toBe(0);
    expect(npx.stdout).toMatch(/^Usage: verdict webhook send <event\.action>/);
  }, 240_000);
});
