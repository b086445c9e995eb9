/**
 * Review benchmark: a 3,000-file, 200,000-line pull request reviewed through the real engine against a
 * local fake GitHub API (`GHE_HOST`, every page of the file list with its `Link` header) and a local fake
 * OpenAI-compatible model that answers each call after a fixed 2 s. With the default budget the PR is
 * split into 12 parts (the rest listed as not reviewed), reviewed `VERDICT_REVIEW_CONCURRENCY` (4) at a
 * time; each part raises one finding, so verification (on, as for every HTTP provider) checks the 12
 * candidates in batches of at most 8, all batches at once: one verification round; then one synthesis
 * call. The figure is the review's wall time as a ratio of the critical path: ceil(parts / concurrency)
 * × 2 s, plus one verification round's 2 s, plus the synthesis call's 2 s. Target: at most 1.25. It also prints the
 * peak RSS (target under 400 MB) and checks, with the engine's own tokenizer and budget, that no request
 * the fake model received was over the model's input budget.
 *
 *   npm run bench:review
 */
import { resourceUsage } from 'node:process';
import { callTokens, inputBudget, modelWindow } from '../../src/review/budget.js';
import type { ChangedFile } from '../../src/review/context.js';
import { defaultCompetitorComparison } from '../../src/review/output.schema.js';
import { confirmingAnswer } from '../../src/review/verification.js';
import { benchVerdict, listen, portOf, readBody, sendCompletion } from './review-fixture.js';

const FILES = 3000;
const LINES = 200_000;
const ANSWER_MS = 2000;
const CONCURRENCY = 4;
const MODEL = 'gpt-4o-mini';
const TARGET_RATIO = 1.25;
const TARGET_RSS_MB = 400;
const OWNER = 'bench';
const NAME = 'monorepo';
const REPO = `${OWNER}/${NAME}`;
const HEAD = 'f'.repeat(40);

/** A skewed spread of files (a few large, many small) in several languages; every line a plausible one. */
function syntheticFiles(): ChangedFile[] {
  const files: ChangedFile[] = [];
  let seed = 7;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const weights = Array.from({ length: FILES }, (_, i) => (i < 6 ? 12 : 1) / (1 + i * 0.05) + rnd() * 0.2);
  const total = weights.reduce((a, b) => a + b, 0);
  const words = ['const', 'value', 'await', 'return', 'config', 'request', 'handler', 'error', 'user', 'id'];
  for (let i = 0; i < FILES; i++) {
    const n = Math.max(1, Math.round((weights[i]! / total) * LINES));
    const ext = i % 3 === 0 ? 'ts' : i % 3 === 1 ? 'py' : 'go';
    const lines = Array.from({ length: n }, (_, l) => {
      const w = Array.from(
        { length: 4 + Math.floor(rnd() * 8) },
        () => words[Math.floor(rnd() * words.length)],
      );
      return `+    ${w.join(' ')}(${Math.floor(rnd() * 1e6)}); // line ${l}`;
    });
    files.push({
      filename: `services/svc${i % 40}/module${i}.${ext}`,
      status: 'added',
      additions: n,
      deletions: 0,
      changes: n,
      patch: `@@ -0,0 +1,${n} @@\n${lines.join('\n')}`,
    });
  }
  return files;
}

/** One finding per part, on the first line of the part's first file (its path is named in the prompt). */
function partFinding(prompt: string) {
  const path = /^### (\S+) \(/m.exec(prompt)?.[1] ?? 'services/svc0/module0.ts';
  return {
    severity: 'medium',
    category: 'correctness',
    path,
    title: 'The result of the call is ignored',
    body: 'The value returned on line 1 is dropped; check it or remove the call.',
    contextIds: [],
    line: 1,
    endLine: 1,
    suggestion: null,
    confidence: 0.8,
  };
}

function answer(kind: 'part' | 'synthesis' | 'verification', prompt: string): string {
  if (kind === 'verification') return confirmingAnswer(prompt);
  if (kind === 'synthesis') {
    return JSON.stringify({
      overview: 'A large change across forty services.',
      summary: 'Reviewed in parts.',
      verdict: 'clear',
      confidenceScore: 3,
      bulletHighlights: [],
      reasoning: 'Each part read.',
      mergeVerdict: 'Review the parts not covered by hand.',
      duplicates: [],
    });
  }
  return JSON.stringify({
    overview: 'Handlers call services.',
    summary: 'No problem found in this part.',
    verdict: 'clear',
    confidenceScore: 4,
    bulletHighlights: [],
    reasoning: 'Read the part.',
    mergeVerdict: 'Nothing blocks in this part.',
    importantFiles: [],
    findings: [partFinding(prompt)],
    priorFindingDispositions: [],
    missingValidations: [],
    crossRepoImpact: [],
    sequenceDiagram: '',
    competitorComparison: defaultCompetitorComparison(),
  });
}

/** What a request to the fake model is: a part, the synthesis, or a verification call (by its schema's name). */
function kindOf(body: any): 'part' | 'synthesis' | 'verification' {
  if (body?.response_format?.json_schema?.name === 'verification') return 'verification';
  return String(body.messages[0].content).includes('was reviewed in several parts') ? 'synthesis' : 'part';
}

async function main() {
  const files = syntheticFiles();
  const changed = files.reduce((n, f) => n + f.changes, 0);
  let base = '';
  const github = await listen(async (req, res) => {
    await readBody(req);
    const url = new URL((req.url ?? '').replace(/^\/api\/v3/, ''), 'http://x');
    const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(value));
    };
    const pr = `/repos/${REPO}/pulls/1`;
    if (req.method === 'POST' && url.pathname.startsWith('/app/installations/')) {
      return json(201, { token: 'ghs_bench', expires_at: '2099-01-01T00:00:00Z' });
    }
    if (url.pathname === `${pr}/files`) {
      const perPage = Number(url.searchParams.get('per_page') ?? 30);
      const page = Number(url.searchParams.get('page') ?? 1);
      const pages = Math.ceil(files.length / perPage);
      const link: Record<string, string> =
        page < pages
          ? { link: `<${base}/api/v3${pr}/files?per_page=${perPage}&page=${page + 1}>; rel="next"` }
          : {};
      return json(200, files.slice((page - 1) * perPage, page * perPage), link);
    }
    if (url.pathname === pr) {
      return json(200, {
        number: 1,
        state: 'open',
        title: 'Migrate every service to the new client',
        body: 'A mechanical migration.',
        draft: false,
        user: { login: 'dev' },
        labels: [],
        head: { sha: HEAD, ref: 'migrate' },
        base: { ref: 'main' },
        changed_files: FILES,
      });
    }
    return json(404, { message: 'Not Found' });
  });
  base = `http://127.0.0.1:${portOf(github)}`;
  const budget = inputBudget(modelWindow(MODEL), null);
  // Requests are kept as received and counted after the run, so counting costs the review nothing.
  const received: any[] = [];
  const model = await listen(async (req, res) => {
    const body = await readBody(req);
    received.push(body);
    const kind = kindOf(body);
    await new Promise((r) => setTimeout(r, ANSWER_MS));
    sendCompletion(res, MODEL, answer(kind, String(body.messages.at(-1).content)));
  });
  const bench = await benchVerdict({
    github,
    model,
    modelName: MODEL,
    owner: OWNER,
    name: NAME,
    env: { VERDICT_REVIEW_CONCURRENCY: String(CONCURRENCY), VERDICT_RUNNER_TIMEOUT_MS: '60000' },
  });
  const store = bench.verdict.store;
  try {
    await store.policy.update((await store.policy.get())!.revision, { fileChangeLimit: 5000 }, 'bench');
    const started = performance.now();
    const finished = await bench.review(HEAD, 'opened');
    const wallMs = performance.now() - started;
    const requests = received.map((body) => {
      const [system, ...messages] = body.messages as Array<{ role: string; content: string }>;
      return {
        tokens: callTokens(
          'openai',
          system!.content,
          body.response_format?.json_schema?.schema,
          messages.map((m) => ({ role: m.role as 'user', content: m.content })),
        ),
        kind: kindOf(body),
      };
    });
    const trace = await store.traces.get(
      (await store.traces.list({ runId: finished.id, limit: 1 }))[0]!.traceId,
    );
    const stages = (trace?.spans ?? [])
      .filter((s) => s.kind === 'stage' && s.name !== 'review')
      .map((s) => `${s.name} ${s.durationMs ?? '?'} ms`);
    const result = finished.result as {
      chunks?: { total: number };
      synthesis?: { status: string } | null;
      coverage?: { analysed: number; skipped: number };
    } | null;
    if (finished.analysisStatus !== 'analysed') {
      throw new Error(`the review ended ${finished.analysisStatus}: ${finished.error ?? ''}`);
    }
    const parts = result?.chunks?.total ?? 0;
    const partCalls = requests.filter((r) => r.kind === 'part').length;
    const synthesisCalls = requests.filter((r) => r.kind === 'synthesis').length;
    const verificationCalls = requests.filter((r) => r.kind === 'verification').length;
    const verification = (finished.result as { verification?: { status: string; published: number } })
      .verification;
    if (verificationCalls === 0 || verificationCalls > CONCURRENCY || verification?.status !== 'verified') {
      throw new Error(
        `expected one round of verification calls (at most ${CONCURRENCY}), got ${verificationCalls} (${verification?.status})`,
      );
    }
    // The parts' rounds, one verification round (its calls run at once), the synthesis call.
    const critical = Math.ceil(parts / CONCURRENCY) * ANSWER_MS + ANSWER_MS + synthesisCalls * ANSWER_MS;
    const ratio = wallMs / critical;
    const peakMb = resourceUsage().maxRSS / 1024;
    const over = requests.filter((r) => r.tokens > budget);
    const largest = Math.max(...requests.map((r) => r.tokens));
    console.log(
      `review benchmark: ${FILES} files, ${changed} changed lines; fake model answering after ${ANSWER_MS / 1000} s; concurrency ${CONCURRENCY}`,
    );
    console.log(
      `  parts ${parts} (${partCalls} part calls, ${verificationCalls} verification calls for ${verification.published} findings confirmed, ${synthesisCalls} synthesis call, synthesis ${result?.synthesis?.status ?? 'none'}); files reviewed ${result?.coverage?.analysed}, not reviewed ${result?.coverage?.skipped}`,
    );
    console.log(
      `  wall ${(wallMs / 1000).toFixed(2)} s, critical path ${(critical / 1000).toFixed(0)} s (ceil(${parts}/${CONCURRENCY}) x 2 s + one verification round + synthesis), peak RSS ${peakMb.toFixed(0)} MB`,
    );
    console.log(`  stages: ${stages.join(', ')}`);
    console.log(
      `  largest request ${largest} tokens, input budget of ${MODEL} ${budget} tokens, requests over it: ${over.length}`,
    );
    const met = parts >= 12 && ratio <= TARGET_RATIO && peakMb < TARGET_RSS_MB && over.length === 0;
    console.log(
      `bench:review: ${ratio.toFixed(2)}x of the critical path, peak RSS ${peakMb.toFixed(0)} MB, ${over.length} request(s) over budget (target at most ${TARGET_RATIO}x, under ${TARGET_RSS_MB} MB, none over, at least 12 parts): ${met ? 'met' : 'missed'}`,
    );
  } finally {
    await bench.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
