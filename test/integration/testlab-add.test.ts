import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nock from 'nock';
import { parse } from 'yaml';
import { runCli } from '../../src/cli/main.js';
import { parseBugSpec } from '../../src/testlab/capture.js';

const { privateKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});
const BASE = 'b'.repeat(40);
const HEAD = 'c'.repeat(40);
const API = 'https://api.github.com';
const content = (path: string, text: string) => ({
  type: 'file',
  encoding: 'base64',
  name: path.split('/').pop(),
  path,
  size: text.length,
  sha: 'd'.repeat(40),
  content: Buffer.from(text).toString('base64'),
});

/** `verdict testlab add --from-pr`: a real pull request, read through the App's credentials, becomes a case. */
describe('verdict testlab add', () => {
  let dir: string;
  let out: string[];
  let err: string[];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'verdict-tl-add-'));
    out = [];
    err = [];
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const io = () => ({
    stdout: (t: string) => out.push(t),
    stderr: (t: string) => err.push(t),
    env: {
      APP_ID: '42',
      PRIVATE_KEY: privateKey,
      LOG_LEVEL: 'silent' as const,
      VERDICT_DB_PATH: join(dir, 'v.sqlite'),
    },
    isTty: false,
  });

  test('captures the title, the files at base and head, and the planted bug', async () => {
    const before =
      'export function page(items: string[], n: number) {\n  return items.slice(n * 10, n * 10 + 10);\n}\n';
    const after =
      'export function page(items: string[], n: number) {\n  return items.slice(n * 10, n * 10 + 9);\n}\n';
    nock(API)
      .get('/repos/acme/shop/installation')
      .reply(200, { id: 77, account: { login: 'acme' } })
      .post('/app/installations/77/access_tokens')
      .reply(201, { token: 'ghs_x', expires_at: new Date(Date.now() + 3600_000).toISOString() })
      .get('/repos/acme/shop/pulls/9')
      .reply(200, {
        number: 9,
        title: 'Paginate the product list',
        body: 'Ten per page.',
        base: { ref: 'main', sha: BASE },
        head: { ref: 'paging', sha: HEAD },
      })
      .get('/repos/acme/shop/pulls/9/files')
      .query({ per_page: '100' })
      .reply(200, [
        { filename: 'src/page.ts', status: 'modified', additions: 1, deletions: 1, changes: 2, patch: '@@' },
        { filename: 'src/new.ts', status: 'added', additions: 1, deletions: 0, changes: 1, patch: '@@' },
      ])
      .get('/repos/acme/shop/contents/src%2Fpage.ts')
      .query({ ref: BASE })
      .reply(200, content('src/page.ts', before))
      .get('/repos/acme/shop/contents/src%2Fpage.ts')
      .query({ ref: HEAD })
      .reply(200, content('src/page.ts', after))
      .get('/repos/acme/shop/contents/src%2Fnew.ts')
      .query({ ref: HEAD })
      .reply(200, content('src/new.ts', 'export const n = 1;\n'));
    const code = await runCli(
      [
        'testlab',
        'add',
        '--from-pr',
        'acme/shop#9',
        '--bug',
        'src/page.ts:2:off-by-one',
        '--corpus',
        dir,
        '--init',
      ],
      io(),
    );
    expect(err).toEqual([]);
    expect(code).toBe(0);
    expect(out.join('\n')).toMatch(
      /added case shop-9 \(typescript, 2 changed file\(s\), 1 planted bug\(s\)\)/,
    );
    const caseDir = join(dir, 'shop-9');
    expect(parse(readFileSync(join(caseDir, 'case.yml'), 'utf8'))).toMatchObject({
      title: 'Paginate the product list',
      language: 'typescript',
      base: 'main',
      head: 'paging',
    });
    expect(parse(readFileSync(join(caseDir, 'expected.yml'), 'utf8')).bugs[0]).toMatchObject({
      path: 'src/page.ts',
      lines: [2, 2],
      category: 'off-by-one',
      severity: 'high',
    });
    expect(readFileSync(join(caseDir, 'before/src/page.ts'), 'utf8')).toBe(before);
    expect(readFileSync(join(caseDir, 'after/src/page.ts'), 'utf8')).toBe(after);
    expect(existsSync(join(caseDir, 'before/src/new.ts'))).toBe(false);
  });

  test('a bug outside the captured files leaves no half-written case', async () => {
    nock(API)
      .get('/repos/acme/shop/installation')
      .reply(200, { id: 77 })
      .post('/app/installations/77/access_tokens')
      .reply(201, { token: 'ghs_x', expires_at: new Date(Date.now() + 3600_000).toISOString() })
      .get('/repos/acme/shop/pulls/9')
      .reply(200, {
        number: 9,
        title: 'T',
        body: null,
        base: { ref: 'main', sha: BASE },
        head: { ref: 'x', sha: HEAD },
      })
      .get('/repos/acme/shop/pulls/9/files')
      .query({ per_page: '100' })
      .reply(200, [{ filename: 'a.go', status: 'added', additions: 1, deletions: 0, changes: 1 }])
      .get('/repos/acme/shop/contents/a.go')
      .query({ ref: HEAD })
      .reply(200, content('a.go', 'package a\n'));
    const code = await runCli(
      ['testlab', 'add', '--from-pr', 'acme/shop#9', '--bug', 'b.go:1:logic', '--corpus', dir, '--init'],
      io(),
    );
    expect(code).toBe(1);
    expect(err.join('\n')).toMatch(/bugs\.0\.path: b\.go is not a file of after\//);
    expect(existsSync(join(dir, 'shop-9'))).toBe(false);
  });

  test('bad arguments are refused before any request', async () => {
    expect(await runCli(['testlab', 'add', '--from-pr', 'acme/shop', '--corpus', dir, '--init'], io())).toBe(
      1,
    );
    expect(err.at(-1)).toMatch(/--from-pr must be owner\/repo#number/);
    expect(() => parseBugSpec('src/a.ts:5-2:logic')).toThrow(/first <= last/);
    expect(() => parseBugSpec('src/a.ts:5:typo')).toThrow(/category must be one of/);
    expect(parseBugSpec('C:/x.ts:3-4:race-condition')).toEqual({
      path: 'C:/x.ts',
      lines: [3, 4],
      category: 'race-condition',
    });
  });
});

/** `verdict testlab run` and `compare` in replay (VERDICT_RUNNER_PROVIDER=replay), in process. */
describe('verdict testlab run and compare', () => {
  test('a run prints the cases and the scores, saves a record, and two records compare', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'verdict-tl-run-'));
    try {
      const out: string[] = [];
      const err: string[] = [];
      const io = {
        stdout: (t: string) => out.push(t),
        stderr: (t: string) => err.push(t),
        env: { VERDICT_RUNNER_PROVIDER: 'replay', LOG_LEVEL: 'silent' as const },
        isTty: false,
      };
      const db = ['--db', join(dir, 'v.sqlite'), '--init'];
      const corpus = join(process.cwd(), 'fixtures/testlab');
      const args = ['testlab', 'run', '--cases', 'go-shortener-*,go-blobstore-*', '--corpus', corpus, ...db];
      expect(await runCli(args, io)).toBe(0);
      expect(await runCli([...args, '--json'], io)).toBe(0);
      expect(err).toEqual([]);
      expect(out[0]).toMatch(/go-shortener-click-stats .* 1\/1 .* anchor/);
      expect(out[0]).toMatch(/go-blobstore-parallel-assemble .* 0\/1 .* missed/);
      expect(out[0]).toMatch(
        /pipeline check \(replay of authored answers, not a measure of review quality\): recall 50% \(1\/2\)/,
      );
      const first = /saved Test Lab record (tl_\w+)/.exec(out[0]!)![1]!;
      const second = JSON.parse(out[1]!).record.id as string;
      expect(await runCli(['testlab', 'compare', first, second, ...db], io)).toBe(0);
      expect(out[2]).toMatch(/Caught by tl_\w+, missed by tl_\w+:\n {2}\(none\)/);
      expect(await runCli(['testlab', 'compare', first, 'tl_nope', ...db], io)).toBe(1);
      expect(err.at(-1)).toBe('verdict testlab: no Test Lab record tl_nope');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
