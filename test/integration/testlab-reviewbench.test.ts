import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pino from 'pino';
import { parse as parseYaml } from 'yaml';
import { loadCase, loadCorpus } from '../../src/testlab/case.js';
import {
  GitDir,
  goldenKeywords,
  importReviewBench,
  mergeBase,
  parsePrKey,
  permissiveLicence,
  readReviewBench,
} from '../../src/testlab/reviewbench.js';
import { runTestLab } from '../../src/testlab/runner.js';
import { fakeOpenAI, listen, type Seen } from '../helpers/fake-openai.js';
import { reviewOutput } from '../helpers/review-output.js';

const MIT = `MIT License

Copyright (c) 2025 Someone

Permission is hereby granted, free of charge, to any person obtaining a copy of this software...`;

/** A small repository: main, a pull request branch off it, main moving on, the pull request merged. */
function makeRepo(dir: string, licence = MIT) {
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@e', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
      .toString()
      .trim();
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  };
  git('init', '-q', '-b', 'main');
  write('LICENSE', licence);
  write('AGENTS.md', 'Review rules.\n');
  write('src/a.ts', 'export const a = 1;\nexport const b = 2;\n');
  write('src/c.ts', 'export const c = 3;\n'.repeat(20));
  write('logo.png', '\u0000PNG');
  git('add', '-A');
  git('commit', '-q', '-m', 'initial');
  const fork = git('rev-parse', 'HEAD');
  git('checkout', '-q', '-b', 'feature');
  write('src/a.ts', 'export const a = 1;\nexport const b = 3;\nexport function token(t) {\n  return t;\n}\n');
  write('src/b.ts', 'export const b = 2;\n');
  git('add', '-A');
  git('commit', '-q', '-m', 'feat: tokens');
  const head = git('rev-parse', 'HEAD');
  git('checkout', '-q', 'main');
  write('README.md', 'later on main\n');
  git('add', '-A');
  git('commit', '-q', '-m', 'docs: readme');
  git('merge', '-q', '--no-ff', '-m', 'Merge pull request #7', 'feature');
  return { fork, head, git };
}

const finding = (over: Record<string, unknown> = {}) => ({
  file: 'src/a.ts',
  start_line: 3,
  end_line: 5,
  severity: 'high',
  category: 'security',
  message: 'The `token` function returns the raw token without `verifyJwt`: an expired token is accepted.',
  scope: 'introduced-by-pr',
  difficulty: 'easy',
  context_required: 'diff-only',
  ...over,
});

describe('importing ReviewBench pull requests', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tl-rb-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test('reads both of ReviewBench formats, and a pr_key', () => {
    const key = 'acme_web_7-0123abcd';
    expect(parsePrKey(key)).toEqual({ number: 7, headPrefix: '0123abcd' });
    expect(() => parsePrKey('acme_web')).toThrow(/not a ReviewBench pr_key/);
    const test = readReviewBench({ [key]: [finding()], other_x_1: [finding()] }, key);
    expect(test).toMatchObject({ key, pr: null, findings: [{ file: 'src/a.ts', tp_fp: 'tp' }] });
    expect(() => readReviewBench({ a_b_1: [], c_d_2: [] })).toThrow(/--key/);
    const golden = readReviewBench({
      pr_key: key,
      pr: { repo: 'https://github.com/acme/web', pr_number: 7, base: 'a'.repeat(40), head: 'b'.repeat(40) },
      findings: [finding({ tp_fp: 'fp' }), finding({ tp_fp: 'tp' })],
    });
    expect(golden.pr).toEqual({
      repo: 'https://github.com/acme/web',
      number: 7,
      base: 'a'.repeat(40),
      head: 'b'.repeat(40),
    });
    expect(golden.findings.map((f) => f.tp_fp)).toEqual(['fp', 'tp']);
  });

  test('permissive licences are told apart from the others; keywords come from the message', () => {
    expect(permissiveLicence(MIT)).toBe('MIT');
    expect(permissiveLicence('Apache License\n Version 2.0, January 2004')).toBe('Apache-2.0');
    expect(permissiveLicence('Redistribution and use in source and binary forms... Neither the name')).toBe(
      'BSD-3-Clause',
    );
    expect(permissiveLicence('GNU GENERAL PUBLIC LICENSE Version 3')).toBeNull();
    expect(
      goldenKeywords(
        'The `shouldTrace(queryChannel)` check skips PKCE when query.callback is unset, silently.',
      ),
    ).toEqual(['shouldtrace', 'querychannel', 'pkce', 'query', 'callback', 'silently']);
  });

  test('the merge base GitHub would use: the fork point, before main moved on and merged the pull request', () => {
    const { fork, head, git } = makeRepo(dir);
    const gitDir = new GitDir(join(dir, '.git'));
    expect(mergeBase(gitDir, head, 7)).toBe(fork);
    // With GitHub's merge ref: the merge base of its first parent (the base tip) and the head.
    git('update-ref', 'refs/pull/7/merge', git('rev-parse', 'HEAD'));
    expect(mergeBase(gitDir, head, 7)).toBe(fork);
  });

  test('a pull request becomes a case: its diff, the context it needs, the golden findings and its source', () => {
    const { fork, head } = makeRepo(dir);
    const corpus = join(dir, 'corpus');
    const rb = readReviewBench({
      pr_key: `acme_web_7-${head.slice(0, 8)}`,
      pr: { repo: 'https://github.com/acme/web', pr_number: 7, base: fork, head },
      findings: [
        finding({ tp_fp: 'tp' }),
        finding({
          tp_fp: 'fp',
          file: 'src/c.ts',
          start_line: 2,
          end_line: 2,
          severity: 'low',
          message: 'Constant `c` repeated.',
        }),
        finding({ tp_fp: 'tp', file: 'src/gone.ts' }),
      ],
    });
    const { case: c, dropped } = importReviewBench({
      rb,
      git: new GitDir(join(dir, '.git')),
      repo: 'acme/web',
      corpus,
      split: 'full',
      title: 'feat: tokens',
    });
    expect(dropped).toEqual(['src/gone.ts:3-5 (no text at the head)']);
    expect(c.name).toBe('rbench-web-7');
    expect(c.files.map((f) => [f.path, f.changed, f.before !== null, f.after !== null])).toEqual([
      ['AGENTS.md', false, true, true],
      ['src/a.ts', true, true, true],
      ['src/b.ts', true, false, true],
      ['src/c.ts', false, true, true],
    ]);
    expect(c.meta).toMatchObject({
      title: 'feat: tokens',
      language: 'typescript',
      kind: 'feature',
      head: 'pull/7',
      body: 'Commits in this pull request:\n\n- feat: tokens',
      source: {
        dataset: 'reviewbench',
        split: 'full',
        repo: 'acme/web',
        pr: 7,
        base: fork,
        head,
        licence: 'MIT',
        licenceFile: 'LICENSE',
      },
    });
    expect(c.meta.liveOnly).toMatch(/no authored answers/);
    expect(c.golden!.map((x) => [x.id, x.path, x.lines, x.label, x.severity])).toEqual([
      ['g01-security', 'src/a.ts', [3, 5], 'tp', 'high'],
      ['g02-security', 'src/c.ts', [2, 2], 'fp', 'low'],
    ]);
    expect(c.golden![0]!.keywords).toEqual(['token', 'verifyjwt', 'expired', 'accepted']);
    expect(c.clean).toBe(false);
    expect(readFileSync(join(corpus, c.name, 'LICENSE'), 'utf8')).toBe(MIT);
    expect(parseYaml(readFileSync(join(corpus, c.name, 'expected.yml'), 'utf8')).golden).toHaveLength(2);
    expect(loadCase(join(corpus, c.name)).golden).toEqual(c.golden);
    // It exists now: importing again needs --replace.
    expect(() =>
      importReviewBench({
        rb,
        git: new GitDir(join(dir, '.git')),
        repo: 'acme/web',
        corpus,
        split: 'full',
        title: 't',
      }),
    ).toThrow(/exists already/);
  });

  test('a repository without a permissive licence is not imported', () => {
    const { head } = makeRepo(dir, 'GNU GENERAL PUBLIC LICENSE\nVersion 3, 29 June 2007\n');
    const corpus = join(dir, 'corpus');
    const rb = readReviewBench({ [`acme_web_7-${head.slice(0, 8)}`]: [finding()] });
    expect(() =>
      importReviewBench({
        rb,
        git: new GitDir(join(dir, '.git')),
        repo: 'acme/web',
        corpus,
        split: 'test',
        title: 't',
      }),
    ).toThrow(/LICENSE is not a permissive licence; not imported/);
    expect(existsSync(join(corpus, 'rbench-web-7'))).toBe(false);
  });

  test('replay skips the imported cases and counts them as skipped, not failed', async () => {
    const corpus = join(process.cwd(), 'fixtures/testlab');
    const imported = loadCorpus(corpus).filter((c) => c.meta.source?.dataset === 'reviewbench');
    expect(imported.length).toBeGreaterThanOrEqual(10);
    expect(new Set(imported.map((c) => c.meta.language)).size).toBeGreaterThanOrEqual(3);
    for (const c of imported) {
      expect(c.meta.source).toMatchObject({ split: 'test', licence: 'MIT' });
      expect(c.name).toMatch(/^rbench-/);
      expect(existsSync(join(c.dir, 'LICENSE'))).toBe(true);
    }
    const run = await runTestLab({
      corpus,
      cases: 'rbench-*',
      concurrency: 1,
      env: {},
      provider: 'replay',
      log: pino({ level: 'silent' }),
    });
    expect(run.cases.map((c) => c.status)).toEqual(imported.map(() => 'skipped'));
    expect(run.cases[0]!.skipped).toMatch(/live run/);
    expect(run.scores).toMatchObject({ mode: 'replay', skippedCases: imported.length, failedCases: 0 });
  });

  test('a live run reviews every imported case end to end from what the case serves', async () => {
    const seen: Seen[] = [];
    const server = fakeOpenAI(seen, () => JSON.stringify(reviewOutput()));
    try {
      const run = await runTestLab({
        corpus: join(process.cwd(), 'fixtures/testlab'),
        cases: 'rbench-*',
        concurrency: 2,
        env: {
          VERDICT_RUNNER_PROVIDER: 'openai',
          VERDICT_RUNNER_MODEL: 'gpt-4o-mini',
          VERDICT_OPENAI_BASE_URL: await listen(server),
        },
        log: pino({ level: 'silent' }),
      });
      expect(run.cases.map((c) => `${c.name}: ${c.status} ${c.error}`)).toEqual(
        run.cases.map((c) => `${c.name}: analysed null`),
      );
      expect(run.unknownRequests).toEqual([]);
      expect(new Set(seen.map((x) => x.caseName))).toEqual(new Set(run.cases.map((c) => c.name)));
      // A review that finds nothing covers no golden finding: recall 0, precision undefined.
      expect(run.scores.reviewBench).toMatchObject({ cases: run.cases.length, coveredTp: 0, findings: 0 });
      expect(run.scores.reviewBench!.goldenTp).toBeGreaterThanOrEqual(100);
      expect(run.scores.reviewBench!.groundedRecall).toBe(0);
      expect(run.scores.reviewBench!.groundedPrecision).toBeNull();
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
