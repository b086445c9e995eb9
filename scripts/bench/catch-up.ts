/**
 * `npm run bench:catch-up`: one pass of `pr-agent-loop` (src/scheduler/catch-up.ts) over 100 enabled
 * repositories with 1,000 open pull requests, none reviewed yet, against a local fake GitHub (GitHub
 * Enterprise addressing, so Probot's own App JWT and installation-token flow runs for real): the App's
 * delivery list (200 attempts of the last 72 hours), an installation token per installation, and each
 * repository's open pulls. Pass 1, the figure: every head gets a catch-up review queued in a fresh SQLite
 * store; target under 10 s. Pass 2, printed for the record: the steady state with 5 failed deliveries.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../../src/clock.js';
import { catchUpGitHubFor } from '../../src/compose/parts.js';
import { loadConfig } from '../../src/config/index.js';
import { createProbot } from '../../src/github/probot.js';
import { createLogger } from '../../src/logger.js';
import { MAX_REDELIVERIES_PER_PASS, runCatchUp } from '../../src/scheduler/catch-up.js';
import { openConfiguredStore } from '../../src/store/index.js';

const REPOS = 100;
const PRS_PER_REPO = 10;
const ATTEMPTS = 200;
/** Failed deliveries in the second (steady-state) pass. */
const FAILED = 5;
const TARGET_MS = 10_000;

const sha = (repo: number, pr: number) =>
  `${repo.toString(16).padStart(4, '0')}${pr.toString(16).padStart(4, '0')}`.padEnd(40, 'a');

function pulls(repo: number, owner: string, name: string) {
  return Array.from({ length: PRS_PER_REPO }, (_, i) => ({
    number: i + 1,
    state: 'open',
    title: `Change ${i + 1} of ${owner}/${name}`,
    draft: false,
    user: { login: 'dev', id: 1, type: 'User' },
    head: { ref: `feature-${i + 1}`, sha: sha(repo, i + 1), repo: { full_name: `${owner}/${name}` } },
    base: {
      ref: 'main',
      sha: 'b'.repeat(40),
      repo: { full_name: `${owner}/${name}`, default_branch: 'main' },
    },
  }));
}

function deliveries(now: number, failed: number) {
  return Array.from({ length: ATTEMPTS }, (_, i) => ({
    id: 9_000_000 + i,
    guid: `guid-${i}`,
    delivered_at: new Date(now - (i + 1) * 60_000).toISOString(),
    redelivery: false,
    duration: 0.1,
    status: i < failed ? 'Service Unavailable' : 'OK',
    status_code: i < failed ? 503 : 200,
    event: 'pull_request',
    action: 'opened',
    installation_id: 1,
    repository_id: 1,
  }));
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'verdict-bench-catch-up-'));
  const now = Date.now();
  const counts = { tokens: 0, pulls: 0, redeliveries: 0 };
  let failing = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    req.resume();
    const path = url.pathname.replace(/^\/api\/v3/, '');
    if (req.method === 'POST' && /^\/app\/installations\/\d+\/access_tokens$/.test(path)) {
      counts.tokens += 1;
      return send(201, { token: 'ghs_bench', expires_at: new Date(now + 3_600_000).toISOString() });
    }
    if (req.method === 'GET' && path === '/app/hook/deliveries') return send(200, deliveries(now, failing));
    if (req.method === 'POST' && /^\/app\/hook\/deliveries\/\d+\/attempts$/.test(path)) {
      counts.redeliveries += 1;
      return send(202, {});
    }
    const m = /^\/repos\/([^/]+)\/repo-(\d+)\/pulls$/.exec(path);
    if (req.method === 'GET' && m) {
      counts.pulls += 1;
      return send(200, pulls(Number(m[2]), m[1]!, `repo-${m[2]}`));
    }
    send(404, { message: 'Not Found' });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const config = loadConfig({
    VERDICT_DB_PATH: join(dir, 'bench.sqlite'),
    APP_ID: '1',
    PRIVATE_KEY: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
    GHE_HOST: `127.0.0.1:${port}`,
    GHE_PROTOCOL: 'http',
    LOG_LEVEL: 'silent',
  });
  const log = createLogger('silent');
  const store = await openConfiguredStore(config);
  try {
    for (let r = 0; r < REPOS; r++) {
      const repo = `acme/repo-${r}`;
      // Ten installations, as ten organisations would have.
      await store.repositories.upsertInstalled(repo, 1 + (r % 10));
      await store.repositories.configure(repo, { enabled: true }, { actor: 'bench', reason: null });
    }
    const probot = createProbot(config.github, log);
    const github = catchUpGitHubFor(probot, config);
    // Pass 1, the figure: every head unreviewed (the first pass after an outage), every delivery delivered.
    let started = performance.now();
    const first = await runCatchUp({ store, github, clock: systemClock, log });
    const ms = performance.now() - started;
    const expected = REPOS * PRS_PER_REPO;
    if (first.enqueued.length !== expected || first.errors.length > 0) {
      throw new Error(
        `expected ${expected} catch-up reviews, got ${first.enqueued.length}: ${first.errors[0] ?? ''}`,
      );
    }
    // Pass 2, for the record: the steady state (every head has its run) with a few failed deliveries.
    failing = FAILED;
    started = performance.now();
    const second = await runCatchUp({ store, github, clock: systemClock, log });
    const steadyMs = performance.now() - started;
    if (second.enqueued.length !== 0 || second.redelivered.length !== FAILED) {
      throw new Error(
        `steady pass: expected 0 queued and ${FAILED} redelivered, got ${second.enqueued.length} and ${second.redelivered.length}`,
      );
    }
    const lines = [
      `catch-up benchmark: ${REPOS} enabled repositories in 10 installations, ${expected} open pull requests, ${ATTEMPTS} delivery attempts in the window; SQLite store, local fake GitHub (Probot's App JWT and installation tokens)`,
      `pass 1 (no head reviewed yet): ${(ms / 1000).toFixed(2)} s, ${first.enqueued.length} reviews queued, ${counts.pulls / 2} pull listings`,
      `pass 2 (steady state, ${FAILED} failed deliveries): ${(steadyMs / 1000).toFixed(2)} s, ${second.redelivered.length} redelivered (Octokit's throttling spaces mutating requests about 1 s apart, as GitHub asks, so redeliveries cost about 1 s each; at most ${MAX_REDELIVERIES_PER_PASS} a pass)`,
      `bench:catch-up: one pass over ${REPOS} repositories and ${expected} unreviewed pull requests in ${(ms / 1000).toFixed(2)} s (target under ${TARGET_MS / 1000} s): ${ms < TARGET_MS ? 'met' : 'missed'}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await store.close();
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
