import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sendJson } from '../http/router.js';
import { githubPatch, patchCounts } from './patch.js';
import type { TestLabCase } from './case.js';

/** The owner every case is served under: case `x` is the repository `testlab/x`, pull request #1. */
export const TESTLAB_OWNER = 'testlab';
export const TESTLAB_PR_NUMBER = 1;
export const TESTLAB_INSTALLATION_ID = 1;

/** A commit id of a case's base or head (stable: the same case text gives the same id). */
export function caseSha(c: TestLabCase, side: 'base' | 'head'): string {
  const h = createHash('sha1').update(`${side}\0${c.name}\0`);
  for (const f of c.files)
    h.update(`${f.path}\0${(side === 'base' ? f.before : f.after) ?? '\u0000deleted'}\0`);
  return h.digest('hex');
}

/** A changed file of a case as the pull-request files API lists it. */
function prFile(c: TestLabCase, f: TestLabCase['files'][number], headSha: string) {
  const patch = githubPatch(f.before, f.after);
  const { additions, deletions } = patchCounts(patch);
  return {
    filename: f.path,
    status: f.before === null ? 'added' : f.after === null ? 'removed' : 'modified',
    additions,
    deletions,
    changes: additions + deletions,
    patch,
    sha: createHash('sha1')
      .update(f.after ?? f.before ?? '')
      .digest('hex'),
    blob_url: `https://github.com/${TESTLAB_OWNER}/${c.name}/blob/${headSha}/${f.path}`,
    raw_url: `https://github.com/${TESTLAB_OWNER}/${c.name}/raw/${headSha}/${f.path}`,
    contents_url: `https://api.github.com/repos/${TESTLAB_OWNER}/${c.name}/contents/${f.path}?ref=${headSha}`,
  };
}

type Served = { c: TestLabCase; baseSha: string; headSha: string; files: ReturnType<typeof prFile>[] };

/**
 * A local GitHub API for the Test Lab: it serves each case as a pull request, with the REST shapes the
 * review engine reads in production (pull request, its files page by page, contents at a commit, the
 * git tree, the App's installation token), so a case is reviewed through the same Octokit and HTTP code
 * as a real one. Writes are refused (the runner publishes in shadow mode) and counted as unexpected.
 */
export class CaseGitHubServer {
  private server: Server | null = null;
  private readonly cases = new Map<string, Served>();
  /** Requests answered, and requests no route knew (a sign the engine asked for something new). */
  readonly requests = { served: 0, unknown: [] as string[] };
  url = '';

  constructor(cases: readonly TestLabCase[]) {
    for (const c of cases) {
      const baseSha = caseSha(c, 'base');
      const headSha = caseSha(c, 'head');
      const files = c.files.filter((f) => f.changed).map((f) => prFile(c, f, headSha));
      this.cases.set(c.name, { c, baseSha, headSha, files });
    }
  }

  headSha(name: string): string {
    return this.cases.get(name)!.headSha;
  }

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((error) => sendJson(res, 500, { message: String(error) }));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}`;
    return this.url;
  }

  async close(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.server = null;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    for await (const _ of req) void _; // drain
    const url = new URL(req.url ?? '/', 'http://localhost');
    // GHES-style base URL: the REST API lives under /api/v3.
    const path = url.pathname.replace(/^\/api\/v3/, '');
    const method = req.method ?? 'GET';
    const found = this.route(method, path, url, req);
    if (!found) {
      this.requests.unknown.push(`${method} ${path}`);
      return sendJson(res, 404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' });
    }
    this.requests.served++;
    if (typeof found.body === 'string') {
      res.writeHead(found.status, { 'content-type': 'application/vnd.github.raw; charset=utf-8' });
      res.end(found.body);
      return;
    }
    sendJson(res, found.status, found.body, found.headers);
  }

  private route(
    method: string,
    path: string,
    url: URL,
    req: IncomingMessage,
  ): { status: number; body: unknown; headers?: Record<string, string> } | null {
    let m: RegExpExecArray | null;
    if (method === 'POST' && (m = /^\/app\/installations\/(\d+)\/access_tokens$/.exec(path))) {
      return {
        status: 201,
        body: {
          token: `ghs_testlab${m[1]}`,
          expires_at: new Date(Date.now() + 3_600_000).toISOString(),
          permissions: { contents: 'read', pull_requests: 'write', checks: 'write' },
          repository_selection: 'all',
        },
      };
    }
    m = /^\/repos\/([^/]+)\/([^/]+)(\/.*)?$/.exec(path);
    if (!m || m[1] !== TESTLAB_OWNER || method !== 'GET') return null;
    const served = this.cases.get(decodeURIComponent(m[2]!));
    if (!served) return null;
    const rest = m[3] ?? '';
    const { c } = served;
    if (rest === `/pulls/${TESTLAB_PR_NUMBER}`) return { status: 200, body: this.pull(served) };
    if (rest === `/pulls/${TESTLAB_PR_NUMBER}/files`) {
      const perPage = Math.min(100, Number(url.searchParams.get('per_page') ?? 30) || 30);
      const page = Math.max(1, Number(url.searchParams.get('page') ?? 1) || 1);
      const slice = served.files.slice((page - 1) * perPage, page * perPage);
      const last = Math.ceil(served.files.length / perPage);
      const headers: Record<string, string> = {};
      if (page < last) {
        const link = (p: number, rel: string) => {
          const u = new URL(url.href);
          u.searchParams.set('page', String(p));
          u.searchParams.set('per_page', String(perPage));
          return `<http://${req.headers.host ?? 'localhost'}${url.pathname}?${u.searchParams}>; rel="${rel}"`;
        };
        headers.link = [link(page + 1, 'next'), link(last, 'last')].join(', ');
      }
      return { status: 200, body: slice, headers };
    }
    if ((m = /^\/contents\/(.+)$/.exec(rest))) {
      const file = decodeURIComponent(m[1]!);
      const ref = url.searchParams.get('ref') ?? c.meta.head;
      const text = this.fileAt(served, file, ref);
      if (text === null) return { status: 404, body: { message: 'Not Found' } };
      if (/raw/.test(String(req.headers.accept ?? ''))) return { status: 200, body: text };
      return {
        status: 200,
        body: {
          type: 'file',
          encoding: 'base64',
          name: file.split('/').pop(),
          path: file,
          size: Buffer.byteLength(text),
          content: Buffer.from(text).toString('base64'),
          sha: createHash('sha1').update(text).digest('hex'),
        },
      };
    }
    if ((m = /^\/git\/trees\/(.+)$/.exec(rest))) {
      const ref = decodeURIComponent(m[1]!);
      const side = this.side(served, ref);
      if (!side) return { status: 404, body: { message: 'Not Found' } };
      const tree = c.files
        .filter((f) => (side === 'base' ? f.before : f.after) !== null)
        .map((f) => ({ path: f.path, mode: '100644', type: 'blob', sha: served.headSha }));
      return {
        status: 200,
        body: { sha: side === 'base' ? served.baseSha : served.headSha, tree, truncated: false },
      };
    }
    return null;
  }

  private side(served: Served, ref: string): 'base' | 'head' | null {
    const { c } = served;
    if (ref === served.headSha || ref === c.meta.head) return 'head';
    if (ref === served.baseSha || ref === c.meta.base) return 'base';
    return null;
  }

  private fileAt(served: Served, path: string, ref: string): string | null {
    const side = this.side(served, ref);
    const file = served.c.files.find((f) => f.path === path);
    if (!side || !file) return null;
    return side === 'base' ? file.before : file.after;
  }

  private pull(served: Served) {
    const { c } = served;
    const repo = {
      id: 1,
      name: c.name,
      full_name: `${TESTLAB_OWNER}/${c.name}`,
      private: true,
      owner: { login: TESTLAB_OWNER, type: 'Organization' },
      default_branch: c.meta.base,
      language: c.meta.language,
    };
    return {
      url: `${this.url}/repos/${TESTLAB_OWNER}/${c.name}/pulls/${TESTLAB_PR_NUMBER}`,
      id: 1,
      node_id: `PR_testlab_${c.name}`,
      number: TESTLAB_PR_NUMBER,
      state: 'open',
      locked: false,
      title: c.meta.title,
      body: c.meta.body,
      user: { login: 'testlab-author', type: 'User' },
      labels: [],
      draft: false,
      merged: false,
      head: { label: `${TESTLAB_OWNER}:${c.meta.head}`, ref: c.meta.head, sha: served.headSha, repo },
      base: { label: `${TESTLAB_OWNER}:${c.meta.base}`, ref: c.meta.base, sha: served.baseSha, repo },
      commits: 1,
      additions: served.files.reduce((n, f) => n + f.additions, 0),
      deletions: served.files.reduce((n, f) => n + f.deletions, 0),
      changed_files: served.files.length,
      html_url: `https://github.com/${TESTLAB_OWNER}/${c.name}/pull/${TESTLAB_PR_NUMBER}`,
    };
  }
}
