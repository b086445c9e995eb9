import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  changedFiles,
  parseRawAndNumstat,
  repositoryName,
  splitPatches,
  treeAt,
} from '../../src/local-review/git.js';
import { describeChange, type LocalChange } from '../../src/local-review/git-source.js';
import { commentLocation, failsAt } from '../../src/local-review/run.js';

/** What `verdict review` reads of git (src/local-review/git.ts), and its small output rules. */
describe('reading a local change from git', () => {
  test('git diff -z --raw --numstat: statuses, renames with both paths, binary counts as 0', () => {
    const a = 'a'.repeat(7);
    const b = 'b'.repeat(7);
    const z = '0'.repeat(7);
    const out = [
      `:100644 100644 ${a} ${b} M`,
      'src/a b.ts',
      `:100644 100644 ${a} ${b} R087`,
      'old.ts',
      'new.ts',
      `:100644 000000 ${a} ${z} D`,
      'gone.ts',
      `:100644 100644 ${a} ${b} M`,
      'logo.png',
      '3\t1\tsrc/a b.ts',
      '1\t1\t',
      'old.ts',
      'new.ts',
      '0\t4\tgone.ts',
      '-\t-\tlogo.png',
      '',
    ].join('\0');
    expect(parseRawAndNumstat(out)).toEqual([
      {
        status: 'M',
        srcSha: a,
        dstSha: b,
        path: 'src/a b.ts',
        previousPath: null,
        additions: 3,
        deletions: 1,
      },
      {
        status: 'R087',
        srcSha: a,
        dstSha: b,
        path: 'new.ts',
        previousPath: 'old.ts',
        additions: 1,
        deletions: 1,
      },
      { status: 'D', srcSha: a, dstSha: z, path: 'gone.ts', previousPath: null, additions: 0, deletions: 4 },
      { status: 'M', srcSha: a, dstSha: b, path: 'logo.png', previousPath: null, additions: 0, deletions: 0 },
    ]);
    expect(parseRawAndNumstat('')).toEqual([]);
  });

  test('git diff --patch: one patch per file from its first hunk, null without hunks', () => {
    const out = [
      'diff --git a/x.ts b/x.ts',
      'index 1..2 100644',
      '--- a/x.ts',
      '+++ b/x.ts',
      '@@ -1,2 +1,2 @@ function f',
      ' keep',
      '-old',
      '+diff --git a/fake b/fake',
      '\\ No newline at end of file',
      'diff --git a/logo.png b/logo.png',
      'index 3..4 100644',
      'Binary files a/logo.png and b/logo.png differ',
      'diff --git a/run.sh b/run.sh',
      'old mode 100644',
      'new mode 100755',
      '',
    ].join('\n');
    expect(splitPatches(out)).toEqual([
      '@@ -1,2 +1,2 @@ function f\n keep\n-old\n+diff --git a/fake b/fake\n\\ No newline at end of file',
      null,
      null,
    ]);
    expect(splitPatches('')).toEqual([]);
  });

  test('against a real repository: a mode change, a file quoting a diff header, a space in a path', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'verdict-git-'));
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=A', '-c', 'user.email=a@example.com', ...args], {
        cwd: dir,
        encoding: 'utf8',
      }).trim();
    try {
      git('init', '-q', '-b', 'main');
      writeFileSync(join(dir, 'run.sh'), 'echo hi\n');
      writeFileSync(join(dir, 'notes.md'), 'intro\n');
      git('add', '-A');
      git('commit', '-q', '-m', 'base');
      const base = git('rev-parse', 'HEAD');
      chmodSync(join(dir, 'run.sh'), 0o755);
      writeFileSync(join(dir, 'notes.md'), 'intro\ndiff --git a/x b/x\n');
      writeFileSync(join(dir, 'a file.txt'), 'one\ntwo');
      git('add', '-A');
      git('commit', '-q', '-m', 'head');
      const head = git('rev-parse', 'HEAD');
      const files = await changedFiles(dir, base, head);
      expect(files.map(({ sha: _sha, ...f }) => f)).toEqual([
        {
          filename: 'a file.txt',
          status: 'added',
          additions: 2,
          deletions: 0,
          changes: 2,
          patch: '@@ -0,0 +1,2 @@\n+one\n+two\n\\ No newline at end of file',
        },
        {
          filename: 'notes.md',
          status: 'modified',
          additions: 1,
          deletions: 0,
          changes: 1,
          patch: '@@ -1 +1,2 @@\n intro\n+diff --git a/x b/x',
        },
        { filename: 'run.sh', status: 'modified', additions: 0, deletions: 0, changes: 0 },
      ]);
      expect(files[0]!.sha).toBe(git('rev-parse', `${head}:a file.txt`));
      expect((await treeAt(dir, base)).map((e) => [e.path, e.mode, e.type])).toEqual([
        ['notes.md', '100644', 'blob'],
        ['run.sh', '100644', 'blob'],
      ]);
      expect(await changedFiles(dir, head, head)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the served pull request is named after the directory and titled as GitHub titles a new one', () => {
    expect(repositoryName('/home/ada/my shop!')).toBe('my-shop-');
    expect(repositoryName('/srv/.hidden')).toBe('hidden');
    const change = (commits: LocalChange['commits']) =>
      ({ head: { ref: 'feature/pay', sha: 'h' }, commits }) as LocalChange;
    const one = { sha: 'a', author: 'Ada', subject: 'Sum by index', body: 'Why.' };
    expect(describeChange(change([one]))).toEqual({ title: 'Sum by index', body: 'Why.' });
    expect(describeChange(change([one, { ...one, subject: 'First' }]))).toEqual({
      title: 'feature/pay',
      body: '- Sum by index\n- First',
    });
  });
});

describe('verdict review output rules', () => {
  test('--fail-on: a finding at or above the threshold (blocker > high > medium > low)', () => {
    const at = (...severities: string[]) => severities.map((severity) => ({ severity }));
    expect(failsAt(at('medium'), 'high')).toBe(false);
    expect(failsAt(at('medium', 'high'), 'high')).toBe(true);
    expect(failsAt(at('blocker'), 'low')).toBe(true);
    expect(failsAt(at('low'), 'low')).toBe(true);
    expect(failsAt(at('high'), 'blocker')).toBe(false);
    expect(failsAt([], 'low')).toBe(false);
  });

  test('a line comment is path:line, or path:start-end for a range', () => {
    expect(commentLocation({ path: 'a.ts', line: 4, body: '' })).toBe('a.ts:4');
    expect(commentLocation({ path: 'a.ts', line: 6, start_line: 4, body: '' })).toBe('a.ts:4-6');
  });
});
