import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local GitHub REST and GraphQL API (as GitHub Enterprise Server serves it, under `/api/v3` and
 * `/api/graphql`) holding one repository's pull request: its check runs, reviews, review comments and
 * threads, created and listed as GitHub does. A `trap` turns one request into a crash of the client at a
 * chosen moment: GitHub acts on the request, then the client is killed before it has the answer (`hold`)
 * or after the answer reached it but before it could read it (`answer`).
 */
export type CheckRun = {
  id: number;
  node_id: string;
  name: string;
  head_sha: string;
  external_id: string | null;
  status: string;
  conclusion: string | null;
  annotations: unknown[];
};
export type Review = {
  id: number;
  node_id: string;
  body: string;
  event: string | null;
  state: string;
  commit_id: string;
  comments: any[];
};
export type ReviewComment = {
  id: number;
  node_id: string;
  pull_request_review_id: number;
  in_reply_to_id?: number;
  path: string;
  line: number | null;
  body: string;
  html_url: string;
};
export type Recorded = { method: string; path: string; body: any };
/** The client process a trap crashes. */
export type Crashable = {
  /** Stops the process (SIGSTOP) and resolves once it is stopped: it cannot read an answer any more. */
  freeze(): Promise<void>;
  /** Kills the process (SIGKILL) and resolves once it exited. */
  kill(): Promise<void>;
};
export type Trap = {
  match: (method: string, path: string, body: any) => boolean;
  /**
   * `hold`: GitHub acts on the request, and the client is killed while it waits for the answer.
   * `answer`: GitHub acts and answers, the client frozen before the answer is written and killed once it
   * is written: the answer reached the client, which never read it (nothing recorded after it).
   */
  mode: 'hold' | 'answer';
  client: Crashable;
};

export type PullRequestState = {
  repo: string;
  number: number;
  head: string;
  /** The files of the pull request at its head (`GET …/pulls/{n}/files`). */
  files: unknown[];
  /** `GET …/compare/{base}...{head}` answers, by `base...head`. */
  compare: Record<string, unknown>;
  /** File contents by `path@ref` (`GET …/contents/{path}?ref=`). */
  contents: Record<string, string>;
};

function readBody(req: IncomingMessage): Promise<any> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        resolve(text === '' ? null : JSON.parse(text));
      } catch {
        resolve(text);
      }
    });
  });
}

export class FakeGitHub {
  readonly calls: Recorded[] = [];
  readonly checkRuns = new Map<number, CheckRun>();
  readonly reviews = new Map<number, Review>();
  readonly comments: ReviewComment[] = [];
  readonly threads: Array<{ id: string; commentId: number; resolved: boolean }> = [];
  trap: Trap | null = null;
  /** Archives served at `GET /repos/{repo}/tarball/{ref}` (gzip'd tar, as githubTarball makes them). */
  readonly tarballs = new Map<string, Buffer>();
  private nextId = 1000;
  private server: Server | null = null;

  constructor(readonly pr: PullRequestState) {}

  async listen(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
  }

  get host(): string {
    return `127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  /** Reviews as GitHub shows them on the pull request (pending reviews are their author's only). */
  submittedReviews(): Review[] {
    return [...this.reviews.values()].filter((r) => r.state !== 'PENDING');
  }

  repliesTo(commentId: number): ReviewComment[] {
    return this.comments.filter((c) => c.in_reply_to_id === commentId);
  }

  count(method: string, pattern: RegExp): number {
    return this.calls.filter((c) => c.method === method && pattern.test(c.path)).length;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const url = new URL((req.url ?? '').replace(/^\/api\/v3/, ''), 'http://github.local');
    const method = req.method!;
    const path = url.pathname;
    this.calls.push({ method, path: path + url.search, body });
    const tarball = method === 'GET' && path.startsWith(`/repos/${this.pr.repo}/tarball/`);
    const archive = tarball ? this.tarballs.get(path.slice(path.lastIndexOf('/') + 1)) : undefined;
    if (tarball) {
      res.writeHead(archive ? 200 : 404, {
        'content-type': archive ? 'application/x-gzip' : 'application/json',
      });
      res.end(archive ?? JSON.stringify({ message: 'Not Found' }));
      return;
    }
    const trap = this.trap?.match(method, path, body) ? this.trap : null;
    if (trap) this.trap = null;
    const [status, answer] = this.route(method, path, url.searchParams, body);
    if (trap?.mode === 'hold') {
      await trap.client.kill();
      res.destroy();
      return;
    }
    if (trap) await trap.client.freeze();
    const text = typeof answer === 'string' ? answer : JSON.stringify(answer);
    res.writeHead(status, {
      'content-type': typeof answer === 'string' ? 'application/vnd.github.raw' : 'application/json',
    });
    await new Promise<void>((resolve) => res.end(text, resolve));
    if (trap) await trap.client.kill();
  }

  private id(): number {
    return this.nextId++;
  }

  private route(method: string, path: string, query: URLSearchParams, body: any): [number, unknown] {
    const { repo, number } = this.pr;
    const r = `/repos/${repo}`;
    const pull = `${r}/pulls/${number}`;
    if (method === 'POST' && /^\/app\/installations\/\d+\/access_tokens$/.test(path)) {
      return [201, { token: 'ghs_fake', expires_at: '2099-01-01T00:00:00Z' }];
    }
    if (method === 'GET' && path === pull) return [200, this.pullRequest()];
    if (method === 'GET' && path === `${pull}/files`) return [200, this.pr.files];
    const compare = new RegExp(`^${r}/compare/(.+)$`).exec(path);
    if (method === 'GET' && compare) {
      const answer = this.pr.compare[decodeURIComponent(compare[1]!)];
      return answer ? [200, answer] : [404, { message: 'Not Found' }];
    }
    const contents = new RegExp(`^${r}/contents/(.+)$`).exec(path);
    if (method === 'GET' && contents) {
      const text = this.pr.contents[`${decodeURIComponent(contents[1]!)}@${query.get('ref')}`];
      return text === undefined ? [404, { message: 'Not Found' }] : [200, text];
    }
    const checks = this.checkRoute(method, path, query, body);
    if (checks) return checks;
    const reviews = this.reviewRoute(method, path, body);
    if (reviews) return reviews;
    if (method === 'POST' && path === '/api/graphql') return this.graphql(body);
    return [404, { message: 'Not Found' }];
  }

  private pullRequest() {
    const [owner, name] = this.pr.repo.split('/');
    return {
      number: this.pr.number,
      state: 'open',
      title: 'Add a cache',
      body: 'Caches user lookups.',
      draft: false,
      user: { login: 'alice' },
      labels: [],
      head: { sha: this.pr.head, ref: 'feature/cache' },
      base: { ref: 'main', repo: { name, owner: { login: owner } } },
      changed_files: this.pr.files.length,
    };
  }

  private checkRoute(
    method: string,
    path: string,
    query: URLSearchParams,
    body: any,
  ): [number, unknown] | null {
    const r = `/repos/${this.pr.repo}`;
    if (method === 'POST' && path === `${r}/check-runs`) {
      const id = this.id();
      const run: CheckRun = {
        id,
        node_id: `CR_${id}`,
        name: body.name,
        head_sha: body.head_sha,
        external_id: body.external_id ?? null,
        status: body.status ?? 'queued',
        conclusion: body.conclusion ?? null,
        annotations: [...(body.output?.annotations ?? [])],
      };
      this.checkRuns.set(id, run);
      return [201, this.checkRunView(run)];
    }
    const one = new RegExp(`^${r}/check-runs/(\\d+)$`).exec(path);
    const existing = one ? this.checkRuns.get(Number(one[1])) : undefined;
    if (one && !existing) return [404, { message: 'Not Found' }];
    if (method === 'PATCH' && existing) {
      // The Checks API appends the annotations of each update.
      existing.annotations.push(...(body.output?.annotations ?? []));
      if (body.status) existing.status = body.status;
      if (body.conclusion) existing.conclusion = body.conclusion;
      return [200, this.checkRunView(existing)];
    }
    if (method === 'GET' && existing) return [200, this.checkRunView(existing)];
    const forRef = new RegExp(`^${r}/commits/([0-9a-f]+)/check-runs$`).exec(path);
    if (method === 'GET' && forRef) {
      const runs = [...this.checkRuns.values()].filter(
        (c) => c.head_sha === forRef[1] && (!query.get('check_name') || c.name === query.get('check_name')),
      );
      return [200, { total_count: runs.length, check_runs: runs.map((c) => this.checkRunView(c)) }];
    }
    return null;
  }

  private checkRunView(c: CheckRun) {
    const { annotations, ...rest } = c;
    return { ...rest, output: { annotations_count: annotations.length } };
  }

  private reviewRoute(method: string, path: string, body: any): [number, unknown] | null {
    const pull = `/repos/${this.pr.repo}/pulls/${this.pr.number}`;
    if (method === 'POST' && path === `${pull}/reviews`) {
      const id = this.id();
      const review: Review = {
        id,
        node_id: `PRR_${id}`,
        body: body.body ?? '',
        event: body.event ?? null,
        state: body.event ? 'COMMENTED' : 'PENDING',
        commit_id: body.commit_id,
        comments: body.comments ?? [],
      };
      this.reviews.set(id, review);
      for (const c of review.comments) {
        const commentId = this.id();
        this.comments.push({
          id: commentId,
          node_id: `PRRC_${commentId}`,
          pull_request_review_id: id,
          path: c.path,
          line: c.line,
          body: c.body,
          html_url: `https://github.example/${this.pr.repo}/pull/${this.pr.number}#discussion_r${commentId}`,
        });
        this.threads.push({ id: `PRRT_${commentId}`, commentId, resolved: false });
      }
      return [200, review];
    }
    if (method === 'GET' && path === `${pull}/reviews`) return [200, this.submittedReviews()];
    const ofReview = new RegExp(`^${pull}/reviews/(\\d+)/comments$`).exec(path);
    if (method === 'GET' && ofReview) {
      return [200, this.comments.filter((c) => c.pull_request_review_id === Number(ofReview[1]))];
    }
    if (method === 'GET' && path === `${pull}/comments`) return [200, this.comments];
    const reply = new RegExp(`^${pull}/comments/(\\d+)/replies$`).exec(path);
    if (method === 'POST' && reply) {
      const to = this.comments.find((c) => c.id === Number(reply[1]));
      if (!to) return [404, { message: 'Not Found' }];
      const id = this.id();
      const comment: ReviewComment = {
        id,
        node_id: `PRRC_${id}`,
        pull_request_review_id: to.pull_request_review_id,
        in_reply_to_id: to.id,
        path: to.path,
        line: to.line,
        body: body.body,
        html_url: `https://github.example/${this.pr.repo}/pull/${this.pr.number}#discussion_r${id}`,
      };
      this.comments.push(comment);
      return [201, comment];
    }
    return null;
  }

  private graphql(body: any): [number, unknown] {
    if (/reviewThreads/.test(body.query)) {
      const nodes = this.threads.map((t) => ({
        id: t.id,
        isResolved: t.resolved,
        comments: { nodes: [{ databaseId: t.commentId }] },
      }));
      const reviewThreads = { pageInfo: { hasNextPage: false, endCursor: null }, nodes };
      return [200, { data: { repository: { pullRequest: { reviewThreads } } } }];
    }
    if (/resolveReviewThread/.test(body.query)) {
      const t = this.threads.find((x) => x.id === body.variables.threadId);
      if (!t) return [200, { data: null, errors: [{ message: 'Could not resolve to a node' }] }];
      t.resolved = true;
      return [200, { data: { resolveReviewThread: { thread: { id: t.id, isResolved: true } } } }];
    }
    if (/minimizeComment/.test(body.query)) {
      return [200, { data: { minimizeComment: { minimizedComment: { isMinimized: true } } } }];
    }
    return [200, { data: null, errors: [{ message: 'unknown query' }] }];
  }
}
