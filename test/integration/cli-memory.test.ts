import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nock from 'nock';
import { randomId, systemClock } from '../../src/clock.js';
import { runCli } from '../../src/cli/main.js';
import { MEMORY_SUBCOMMAND_HELP } from '../../src/cli/memory-help.js';
import { openStore, type Store } from '../../src/store/index.js';
import { assertNoUnusedInterceptors, localNetworkOnly } from '../helpers/network.js';

/** `verdict memory ...`: the memory services on the store, for the local operator. */
describe('verdict memory', () => {
  let dir: string;
  let db: string;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'verdict-cli-memory-'));
    db = join(dir, 'v.sqlite');
    const store = await openStore(
      { client: 'sqlite', filename: db },
      { clock: systemClock, ids: randomId, dedupeTtlSeconds: 60 },
    );
    await store.close();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  async function cli(args: string[], env: Record<string, string> = {}) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli([...args, '--db', db], {
      stdout: (t) => out.push(t),
      stderr: (t) => err.push(t),
      env: { LOG_LEVEL: 'silent', USER: 'tester', ...env },
      isTty: false,
    });
    return { code, stdout: out.join('\n'), stderr: err.join('\n') };
  }
  const json = async (args: string[], env?: Record<string, string>) => {
    const res = await cli([...args, '--json'], env);
    expect([args.join(' '), res.code, res.stderr]).toEqual([args.join(' '), 0, '']);
    return JSON.parse(res.stdout);
  };
  async function withStore<T>(work: (store: Store) => Promise<T>): Promise<T> {
    const store = await openStore(
      { client: 'sqlite', filename: db },
      { clock: systemClock, ids: randomId, dedupeTtlSeconds: 60 },
    );
    try {
      return await work(store);
    } finally {
      await store.close();
    }
  }

  test('--help for the command and every subcommand', async () => {
    const main = await cli(['memory', '--help']);
    expect(main.code).toBe(0);
    expect(main.stdout).toContain('Usage: verdict memory <subcommand>');
    for (const sub of Object.keys(MEMORY_SUBCOMMAND_HELP)) {
      expect(main.stdout).toContain(`  ${sub}`);
      const help = await cli(['memory', sub, '--help']);
      expect([sub, help.code, help.stderr]).toEqual([sub, 0, '']);
      expect(help.stdout).toContain(`Usage: verdict memory ${sub}`);
    }
    expect((await cli(['--help'])).stdout).toMatch(/^ {2}memory <subcommand> +list and edit memory/m);
    expect(await cli(['memory'])).toMatchObject({
      code: 1,
      stderr: 'verdict memory: needs a subcommand (run verdict memory --help)',
    });
    expect(await cli(['memory', 'forget'])).toMatchObject({
      code: 1,
      stderr: 'verdict memory: unknown subcommand "forget" (run verdict memory --help)',
    });
  });

  test('contexts: add, list, show, edit (revision read or given), remove; refusals on one line', async () => {
    const added = await json([
      'memory',
      'add-context',
      '--repo',
      'acme/web',
      '--title',
      'Use the logger',
      '--body',
      'Never console.log.',
      '--path',
      'src/**',
      '--path',
      'lib/*.ts',
    ]);
    const id = added.context.id as string;
    expect(added.context).toMatchObject({
      repo: 'acme/web',
      paths: ['src/**', 'lib/*.ts'],
      source: 'operator',
      revision: 1,
      createdBy: 'cli:tester',
    });
    const workspace = await cli([
      'memory',
      'add-context',
      '--title',
      'Tabs',
      '--body',
      'Indent.',
      '--disable',
    ]);
    expect(workspace).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^created context mem_\w+ \(revision 1\)$/),
    });

    const table = await cli(['memory', 'contexts']);
    expect(table.stdout.split('\n')[0]).toMatch(/^ID +REPO +PATHS +ON +REV +TITLE$/);
    expect(table.stdout).toMatch(
      new RegExp(`${id} +acme/web +src/\\*\\*,lib/\\*\\.ts +yes +1 +Use the logger`),
    );
    expect(table.stdout).toMatch(/ \* +\* +no +1 +Tabs/);
    expect((await json(['memory', 'contexts', '--repo', 'acme/web'])).contexts.map((c: any) => c.id)).toEqual(
      [id],
    );
    expect((await json(['memory', 'contexts', '--search', 'indent'])).contexts).toHaveLength(1);

    const shown = await cli(['memory', 'context', id]);
    expect(shown.stdout).toContain('paths      src/**, lib/*.ts');
    expect(shown.stdout).toContain('created    ');
    expect(shown.stdout.endsWith('\n\nNever console.log.')).toBe(true);

    const edited = await cli(['memory', 'edit-context', id, '--title', 'Log via log.info', '--all-paths']);
    expect(edited).toMatchObject({ code: 0, stdout: `updated context ${id} (revision 2)` });
    const stale = await cli(['memory', 'edit-context', id, '--disable', '--revision', '1']);
    expect(stale).toMatchObject({
      code: 1,
      stderr: 'verdict memory: The memory context has changed: it is at revision 2',
    });
    expect(
      (await json(['memory', 'edit-context', id, '--disable', '--revision', '2'])).context,
    ).toMatchObject({
      enabled: false,
      paths: [],
      title: 'Log via log.info',
      revision: 3,
    });
    expect((await cli(['memory', 'edit-context', id])).stderr).toBe(
      'verdict memory: nothing to change (run verdict memory edit-context --help)',
    );
    expect((await cli(['memory', 'rm-context', id, '--revision', '2'])).code).toBe(1);
    expect(await cli(['memory', 'rm-context', id])).toMatchObject({
      code: 0,
      stdout: `deleted context ${id}`,
    });
    expect(await cli(['memory', 'context', id])).toMatchObject({
      code: 1,
      stderr: 'verdict memory: No such memory context',
    });

    expect((await cli(['memory', 'add-context', '--body', 'b'])).stderr).toMatch(
      /^verdict memory: Invalid field title: /,
    );
    expect(
      (await cli(['memory', 'add-context', '--title', 't', '--body', 'b', '--path', 'a/**b'])).stderr,
    ).toBe("verdict memory: Invalid field paths.0: '**' must be a whole segment");
    expect(
      (await cli(['memory', 'add-context', '--title', 't', '--body', 'b', '--repo', 'nope'])).stderr,
    ).toMatch(/^verdict memory: Invalid field repo: /);
    expect((await cli(['memory', 'rm-context', id, '--revision', 'two'])).stderr).toBe(
      'verdict memory: --revision must be a whole number (got "two")',
    );
    expect((await cli(['memory', 'contexts', 'extra'])).stderr).toBe(
      'verdict memory: contexts takes no arguments',
    );
    // Every write is audited with the local operator as its actor.
    const audit = await withStore((store) => store.audit.list({ limit: 20 }));
    expect(audit.filter((e) => e.target === id).map((e) => [e.action, e.actor])).toEqual([
      ['memory.context.delete', 'cli:tester'],
      ['memory.context.update', 'cli:tester'],
      ['memory.context.update', 'cli:tester'],
      ['memory.context.create', 'cli:tester'],
    ]);
  });

  test('clusters: add, set the action, list with feedback, remove', async () => {
    const created = await json([
      'memory',
      'add-cluster',
      '--repo',
      'acme/web',
      '--label',
      'Nits on naming',
      '--title',
      'Rename x',
      '--body',
      'x says nothing.',
      '--category',
      'style',
      '--path',
      'src/a.ts',
    ]);
    const id = created.cluster.id as string;
    expect(created.cluster).toMatchObject({
      action: 'none',
      exemplar: { title: 'Rename x', body: 'x says nothing.', category: 'style', path: 'src/a.ts' },
    });
    expect(await cli(['memory', 'set-cluster', id, '--action', 'suppress'])).toMatchObject({
      code: 0,
      stdout: `updated cluster ${id} (acme/web, action suppress, revision 2)`,
    });
    expect((await cli(['memory', 'set-cluster', id, '--action', 'mute'])).stderr).toMatch(
      /^verdict memory: Invalid field action: /,
    );
    expect((await cli(['memory', 'set-cluster', id])).stderr).toBe(
      'verdict memory: nothing to change: give --action or --label',
    );
    const list = await cli(['memory', 'clusters', '--repo', 'acme/web']);
    expect(list.stdout.split('\n')[0]).toMatch(
      /^ID +REPO +ACTION +SIZE +UP +DOWN +DISMISSED +ADDRESSED +LABEL$/,
    );
    expect(list.stdout).toMatch(new RegExp(`${id} +acme/web +suppress +0 +0 +0 +0 +0 +Nits on naming`));
    expect((await cli(['memory', 'rm-cluster', id, '--revision', '1'])).stderr).toBe(
      'verdict memory: The memory cluster has changed: it is at revision 2',
    );
    expect(await cli(['memory', 'rm-cluster', id])).toMatchObject({
      code: 0,
      stdout: `deleted cluster ${id}`,
    });
    expect((await cli(['memory', 'rm-cluster', id])).stderr).toBe(`verdict memory: no memory cluster ${id}`);
    expect((await cli(['memory', 'clusters'])).stdout).toBe('no clusters');
  });

  test('knowledge: put from a file, show, list, replace (revision read or given)', async () => {
    const notes = join(dir, 'notes.md');
    writeFileSync(notes, '# API\nHandlers stay thin.\n');
    const put = await cli([
      'memory',
      'put-knowledge',
      '--repo',
      'acme/web',
      '--path',
      'src/api',
      '--body-file',
      notes,
    ]);
    expect(put).toMatchObject({ code: 0, stdout: 'saved knowledge acme/web src/api (revision 1)' });
    const shown = await cli(['memory', 'show-knowledge', '--repo', 'acme/web', '--path', 'src/api']);
    expect(shown.stdout).toMatch(/^src\/api \(acme\/web src\/api, revision 1, \d{4}-/);
    expect(shown.stdout).toContain('# API\nHandlers stay thin.\n');
    const again = await cli([
      'memory',
      'put-knowledge',
      '--repo',
      'acme/web',
      '--path',
      'src/api',
      '--body',
      'New.',
      '--title',
      'API',
    ]);
    expect(again.stdout).toBe('saved knowledge acme/web src/api (revision 2)');
    expect(
      (
        await cli([
          'memory',
          'put-knowledge',
          '--repo',
          'acme/web',
          '--path',
          'src/api',
          '--body',
          'x',
          '--revision',
          '1',
        ])
      ).stderr,
    ).toBe('verdict memory: The knowledge document has changed: it is at revision 2');
    const list = await json(['memory', 'knowledge', '--repo', 'acme/web']);
    expect(list.documents).toEqual([
      {
        repo: 'acme/web',
        path: 'src/api',
        title: 'API',
        revision: 2,
        updatedAt: expect.any(String),
        bytes: 4,
      },
    ]);
    expect((await cli(['memory', 'show-knowledge', '--repo', 'acme/web', '--path', 'docs'])).stderr).toBe(
      'verdict memory: no knowledge document at acme/web docs',
    );
    expect((await cli(['memory', 'put-knowledge', '--repo', 'acme/web', '--path', 'a'])).stderr).toBe(
      'verdict memory: needs --body or --body-file',
    );
    expect(
      (await cli(['memory', 'put-knowledge', '--repo', 'acme/web', '--path', '../a', '--body', 'b'])).stderr,
    ).toMatch(/^verdict memory: Invalid field path: /);
  });

  test('integrations and the preview without App credentials', async () => {
    const integrations = await cli(['memory', 'integrations']);
    expect(integrations.stdout).toMatch(/^linked-issues +no +/m);
    expect(integrations.stdout).toMatch(/^review-feedback +yes +/m);
    expect(await cli(['memory', 'preview', '--repo', 'acme/web', '--number', '7'])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('needs the GitHub App credentials (APP_ID and PRIVATE_KEY)'),
    });
    expect((await cli(['memory', 'preview', '--repo', 'acme/web'])).stderr).toMatch(
      /^verdict memory: Invalid field number: /,
    );
  });

  describe('the preview with App credentials', () => {
    const { privateKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    beforeAll(() => localNetworkOnly());
    afterAll(() => nock.enableNetConnect());
    afterEach(() => assertNoUnusedInterceptors());

    test('reads the pull request through the App and prints what a review would be given', async () => {
      await withStore(async (store) => {
        await store.memory.createContext({
          id: 'ctx-1',
          repo: 'acme/web',
          paths: ['src/**'],
          title: 't',
          body: 'b',
          createdBy: 't',
        });
        await store.memory.putKnowledge({ repo: 'acme/web', path: '/', body: 'Overview.' }, 't');
      });
      nock('https://api.github.com')
        .get('/repos/acme/web/installation')
        .reply(200, { id: 55, account: { login: 'acme' } })
        .post('/app/installations/55/access_tokens')
        .reply(201, { token: 'ghs_x', expires_at: '2099-01-01T00:00:00Z' })
        .get('/repos/acme/web/pulls/7')
        .reply(200, {
          number: 7,
          state: 'open',
          title: 'Add a cache',
          body: 'Closes #5, see #6',
          draft: false,
          user: { login: 'alice' },
          labels: [],
          head: { sha: 'a'.repeat(40), ref: 'cache' },
          base: { ref: 'main', sha: 'b'.repeat(40) },
          changed_files: 1,
        })
        .get('/repos/acme/web/pulls/7/files')
        .query({ per_page: '100' })
        .reply(200, [
          {
            filename: 'src/cache.ts',
            status: 'added',
            additions: 1,
            deletions: 0,
            changes: 1,
            patch: '@@ -0,0 +1 @@\n+x',
          },
        ])
        .get('/repos/acme/web/git/trees/main')
        .query({ recursive: 'true' })
        .reply(200, { sha: 'f'.repeat(40), url: '', truncated: false, tree: [] })
        .get('/repos/acme/web/issues/5')
        .reply(200, { id: 5, number: 5, state: 'open', title: 'Slow lookups', body: 'Cache them.' })
        .get('/repos/acme/web/issues/6')
        .reply(404, { message: 'Not Found' });
      const res = await cli(['memory', 'preview', '--repo', 'acme/web', '--number', '7'], {
        APP_ID: '42',
        PRIVATE_KEY: privateKey,
        VERDICT_GITHUB_RETRIES: '0',
      });
      expect(res).toMatchObject({ code: 0, stderr: '' });
      expect(res.stdout.split('\n')).toEqual([
        'acme/web#7 Add a cache',
        `head ${'a'.repeat(12)} on main, 1 changed file(s)`,
        'contexts            ctx-1',
        'knowledge           /',
        'linked issues       #5',
        'instruction files   (none)',
        'suppressed clusters (none)',
        'note: #6 not given: not found',
      ]);
    });
  });
});
