/**
 * Incremental review benchmark: what a push costs in prompt tokens. A 50-file pull request is reviewed
 * in full through the real engine (a local fake GitHub API and a local fake OpenAI-compatible model;
 * publication in shadow mode); then one file is changed and pushed, and the second run reviews the change
 * since the first head. The figure is the prompt tokens (system and user messages, by the same tokenizer
 * as the budget) the model received for the incremental review, as a share of the first full review.
 *
 *   npm run bench:incremental
 */
import { tokensOf } from '../../src/review/context.js';
import { defaultCompetitorComparison } from '../../src/review/output.schema.js';
import { benchVerdict, listen, readBody, sendCompletion } from './review-fixture.js';

const FILES = 50;
const LINES_PER_FILE = 40;
const TARGET = 0.15;
const OWNER = 'bench';
const NAME = 'service';
const REPO = `${OWNER}/${NAME}`;
const HEAD1 = '1'.repeat(40);
const HEAD2 = '2'.repeat(40);

function fileLines(i: number, changed: boolean): string[] {
  return Array.from({ length: LINES_PER_FILE }, (_, l) =>
    l === 5 && changed
      ? `  if (!input${i}) throw new Error('input ${i} is required');`
      : `  const value${l} = await service${i}.compute(input${i}, { step: ${l}, retries: ${l % 3} });`,
  );
}

function addedPatch(lines: string[]): string {
  return `@@ -0,0 +1,${lines.length} @@\n${lines.map((l) => `+${l}`).join('\n')}`;
}

/** The PR's files at a head: every file added; at HEAD2 file 0 has one line changed. */
function prFiles(head: string) {
  return Array.from({ length: FILES }, (_, i) => {
    const lines = fileLines(i, head === HEAD2 && i === 0);
    return {
      filename: `src/module${i}/handler${i}.ts`,
      status: 'added',
      additions: lines.length,
      deletions: 0,
      changes: lines.length,
      patch: addedPatch(lines),
    };
  });
}

const COMPARE_PATCH = [
  '@@ -3,5 +3,5 @@',
  ...fileLines(0, false)
    .slice(2, 5)
    .map((l) => ` ${l}`),
  `-${fileLines(0, false)[5]}`,
  `+${fileLines(0, true)[5]}`,
  ` ${fileLines(0, false)[6]}`,
].join('\n');

function reviewAnswer(findings: unknown[]) {
  return {
    overview: 'Adds fifty handlers.',
    summary: 'Handlers compute values in steps.',
    verdict: 'needs-attention',
    confidenceScore: 4,
    bulletHighlights: [],
    reasoning: 'Read every handler.',
    mergeVerdict: 'Check the missing input validation.',
    importantFiles: [],
    findings,
    priorFindingDispositions: [],
    missingValidations: [],
    crossRepoImpact: [],
    sequenceDiagram: '',
    competitorComparison: defaultCompetitorComparison(),
  };
}

async function main() {
  let head = HEAD1;
  const github = await listen(async (req, res) => {
    await readBody(req);
    const path = (req.url ?? '').replace(/^\/api\/v3/, '');
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    const pr = `/repos/${REPO}/pulls/1`;
    if (req.method === 'POST' && path.startsWith('/app/installations/')) {
      return json(201, { token: 'ghs_bench', expires_at: '2099-01-01T00:00:00Z' });
    }
    if (path.startsWith(`${pr}/files`)) {
      const page = Number(new URL(path, 'http://x').searchParams.get('page') ?? '1');
      return json(200, page === 1 ? prFiles(head) : []);
    }
    if (path.split('?')[0] === pr) {
      return json(200, {
        number: 1,
        state: 'open',
        title: 'Add handlers',
        body: 'Fifty new handlers.',
        draft: false,
        user: { login: 'dev' },
        labels: [],
        head: { sha: head, ref: 'feature/handlers' },
        base: { ref: 'main' },
        changed_files: FILES,
      });
    }
    if (path.startsWith(`/repos/${REPO}/compare/${HEAD1}...${HEAD2}`)) {
      return json(200, {
        status: 'ahead',
        ahead_by: 1,
        behind_by: 0,
        files: [
          {
            filename: 'src/module0/handler0.ts',
            status: 'modified',
            additions: 1,
            deletions: 1,
            changes: 2,
            patch: COMPARE_PATCH,
          },
        ],
      });
    }
    return json(404, { message: 'Not Found' });
  });
  /** Prompt tokens the model received per reviewed head (all parts and repair attempts of a run). */
  const prompts = new Map<string, number>();
  let calls = 0;
  const model = await listen(async (req, res) => {
    const body = await readBody(req);
    const text = body.messages.map((m: { content: string }) => m.content).join('\n');
    prompts.set(head, (prompts.get(head) ?? 0) + tokensOf(text));
    calls++;
    const findings =
      calls === 1
        ? [
            {
              severity: 'medium',
              category: 'validation',
              path: 'src/module0/handler0.ts',
              title: 'input0 is not validated',
              body: 'A missing input reaches compute().',
              contextIds: [],
              line: 6,
            },
          ]
        : [];
    sendCompletion(res, 'gpt-4o-mini', JSON.stringify(reviewAnswer(findings)));
  });
  const bench = await benchVerdict({ github, model, modelName: 'gpt-4o-mini', owner: OWNER, name: NAME });
  try {
    const review = (sha: string, trigger: string) => {
      head = sha;
      return bench.review(sha, trigger);
    };
    const first = await review(HEAD1, 'opened');
    const second = await review(HEAD2, 'synchronize');
    const kind = (second.result as { review?: { kind: string } } | null)?.review?.kind;
    if (
      first.analysisStatus !== 'analysed' ||
      second.analysisStatus !== 'analysed' ||
      kind !== 'incremental'
    ) {
      throw new Error(
        `unexpected runs: ${first.analysisStatus}, ${second.analysisStatus} (${kind ?? 'no review kind'})`,
      );
    }
    const full = prompts.get(HEAD1)!;
    const incremental = prompts.get(HEAD2)!;
    const share = incremental / full;
    console.log(
      `incremental benchmark: ${FILES}-file pull request, ${LINES_PER_FILE} lines a file; a push changing 1 line of 1 file`,
    );
    console.log(`  full review prompt:        ${full} tokens`);
    console.log(`  incremental review prompt: ${incremental} tokens`);
    console.log(
      `bench:incremental: ${(share * 100).toFixed(1)}% of the full review's prompt tokens (target at most ${TARGET * 100}%): ${
        share <= TARGET ? 'met' : 'missed'
      }`,
    );
  } finally {
    await bench.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
