import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sendJson } from '../http/router.js';

/** The installation every served pull request belongs to (the App authenticates as it). */
export const SERVED_INSTALLATION_ID = 1;

/** A changed file as the pull-request files API lists it, less the links the server adds. */
export type SourceFile = {
  filename: string;
  status: 'added' | 'removed' | 'modified' | 'renamed' | 'copied' | 'changed';
  additions: number;
  deletions: number;
  changes: number;
  /** The unified-diff hunks without the `---`/`+++` lines; absent for a binary file, as GitHub omits it. */
  patch?: string;
  previous_filename?: string;
  sha: string;
};

/** A file of a served commit's tree (`git/trees/{ref}?recursive=true`). */
export type SourceTreeEntry = { path: string; mode: string; type: 'blob' | 'commit'; sha: string };

export type Side = 'base' | 'head';

/**
 * One pull request a PullRequestServer serves: its facts, its changed files, and the files of its base and
 * head commits. The Test Lab serves a case from its folders (src/testlab/github-server.ts), `verdict review`
 * a local git change (src/local-review/git-source.ts).
 */
export interface PullRequestSource {
  readonly owner: string;
  readonly name: string;
  readonly number: number;
  readonly pull: {
    title: string;
    body: string;
    author: string;
    baseRef: string;
    headRef: string;
    baseSha: string;
    headSha: string;
    language: string | null;
    defaultBranch: string;
  };
  readonly files: readonly SourceFile[];
  /** Which commit a `ref` names (a commit id or a branch name of the base or head), null when neither. */
  side(ref: string): Side | null;
  /** A file's text at the base or head, null when it does not exist there. */
  read(side: Side, path: string): string | null | Promise<string | null>;
  /** Every file of the base or head commit. */
  tree(side: Side): readonly SourceTreeEntry[] | Promise<readonly SourceTreeEntry[]>;
}

type Answer = { status: number; body: unknown; headers?: Record<string, string> };

/**
 * A local GitHub API that serves pull requests, with the REST shapes the review engine reads in
 * production (pull request, its files page by page, contents at a commit, the git tree, the App's
 * installation token; an issue its body links is not found), so a served pull request is reviewed through the same Octokit and HTTP code as a
 * real one. Writes are refused (its users publish in shadow mode) and counted as unexpected.
 */
export class PullRequestServer {
  private server: Server | null = null;
  private readonly served = new Map<string, PullRequestSource>();
  /** Requests answered, and requests no route knew (a sign the engine asked for something new). */
  readonly requests = { served: 0, unknown: [] as string[] };
  url = '';

  constructor(sources: readonly PullRequestSource[]) {
    for (const s of sources) this.served.set(`${s.owner}/${s.name}`, s);
  }

  /** The source served as `owner/name`. */
  source(owner: string, name: string): PullRequestSource | undefined {
    return this.served.get(`${owner}/${name}`);
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
    const found = await this.route(method, path, url, req);
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

  private async route(method: string, path: string, url: URL, req: IncomingMessage): Promise<Answer | null> {
    let m: RegExpExecArray | null;
    if (method === 'POST' && (m = /^\/app\/installations\/(\d+)\/access_tokens$/.exec(path))) {
      return {
        status: 201,
        body: {
          token: `ghs_served${m[1]}`,
          expires_at: new Date(Date.now() + 3_600_000).toISOString(),
          permissions: { contents: 'read', pull_requests: 'write', checks: 'write' },
          repository_selection: 'all',
        },
      };
    }
    m = /^\/repos\/([^/]+)\/([^/]+)(\/.*)?$/.exec(path);
    if (!m || method !== 'GET') return null;
    const source = this.source(decodeURIComponent(m[1]!), decodeURIComponent(m[2]!));
    if (!source) return null;
    const rest = m[3] ?? '';
    if (rest === `/pulls/${source.number}`) return { status: 200, body: this.pull(source) };
    if (rest === `/pulls/${source.number}/files`) return this.filesPage(source, url, req);
    if ((m = /^\/contents\/(.+)$/.exec(rest))) {
      const file = decodeURIComponent(m[1]!);
      const side = source.side(url.searchParams.get('ref') ?? source.pull.headRef);
      const text = side ? await source.read(side, file) : null;
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
    // A served source has no issues: a linked issue (the `linked-issues` memory integration) is not found.
    if (/^\/issues\/\d+$/.test(rest)) return { status: 404, body: { message: 'Not Found' } };
    if ((m = /^\/git\/trees\/(.+)$/.exec(rest))) {
      const side = source.side(decodeURIComponent(m[1]!));
      if (!side) return { status: 404, body: { message: 'Not Found' } };
      const tree = (await source.tree(side)).map((e) => ({
        path: e.path,
        mode: e.mode,
        type: e.type,
        sha: e.sha,
      }));
      return {
        status: 200,
        body: { sha: side === 'base' ? source.pull.baseSha : source.pull.headSha, tree, truncated: false },
      };
    }
    return null;
  }

  /** One page of the changed files, with GitHub's `link` header when more pages follow. */
  private filesPage(source: PullRequestSource, url: URL, req: IncomingMessage): Answer {
    const { owner, name } = source;
    const headSha = source.pull.headSha;
    const files = source.files.map((f) => ({
      ...f,
      blob_url: `https://github.com/${owner}/${name}/blob/${headSha}/${f.filename}`,
      raw_url: `https://github.com/${owner}/${name}/raw/${headSha}/${f.filename}`,
      contents_url: `https://api.github.com/repos/${owner}/${name}/contents/${f.filename}?ref=${headSha}`,
    }));
    const perPage = Math.min(100, Number(url.searchParams.get('per_page') ?? 30) || 30);
    const page = Math.max(1, Number(url.searchParams.get('page') ?? 1) || 1);
    const slice = files.slice((page - 1) * perPage, page * perPage);
    const last = Math.ceil(files.length / perPage);
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

  private pull(source: PullRequestSource) {
    const { owner, name, number, pull: p, files } = source;
    const repo = {
      id: 1,
      name,
      full_name: `${owner}/${name}`,
      private: true,
      owner: { login: owner, type: 'Organization' },
      default_branch: p.defaultBranch,
      language: p.language,
    };
    return {
      url: `${this.url}/repos/${owner}/${name}/pulls/${number}`,
      id: 1,
      node_id: `PR_${owner}_${name}`,
      number,
      state: 'open',
      locked: false,
      title: p.title,
      body: p.body,
      user: { login: p.author, type: 'User' },
      labels: [],
      draft: false,
      merged: false,
      head: { label: `${owner}:${p.headRef}`, ref: p.headRef, sha: p.headSha, repo },
      base: { label: `${owner}:${p.baseRef}`, ref: p.baseRef, sha: p.baseSha, repo },
      commits: 1,
      additions: files.reduce((n, f) => n + f.additions, 0),
      deletions: files.reduce((n, f) => n + f.deletions, 0),
      changed_files: files.length,
      html_url: `https://github.com/${owner}/${name}/pull/${number}`,
    };
  }
}
