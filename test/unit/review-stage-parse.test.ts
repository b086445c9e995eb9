import type { PassResult } from '../../src/review/pass.js';
import { buildReviewInput } from '../../src/review/context.js';
import { parseStage, type ParseInput } from '../../src/review/parse.stage.js';
import { reviewOutput } from '../helpers/review-output.js';
import { changedFile } from '../helpers/stages.js';

/** Stage `parse`: the pass's readings as one list of candidates; what could not be used is counted and said. */

const finding = (title: string) => ({
  severity: 'medium' as const,
  category: 'bug',
  path: 'src/a.ts',
  title,
  body: '',
  contextIds: [],
});

/** Three parts of one file each. */
const PARTS = buildReviewInput(
  [changedFile('src/a.ts', 40), changedFile('src/b.ts', 40), changedFile('src/c.ts', 40)],
  {
    chunkTokens: 600,
    fileTokens: 600,
    maxChunks: 12,
  },
).chunks;

function input(pass: Partial<PassResult>, parts = PARTS): ParseInput {
  return {
    called: { primary: { outputs: [], failed: new Map(), retryable: false, splits: 0, ...pass } },
    budgeted: { input: { chunks: parts } },
  };
}

describe('stage parse', () => {
  test('several parts: candidates in part order, warnings named by part, failed parts and unreadable findings said', async () => {
    expect(PARTS).toHaveLength(3);
    const i = input({
      outputs: [
        {
          chunk: 0,
          output: reviewOutput({ findings: [finding('a')] }),
          warnings: ['removed trailing commas from the JSON'],
          unreadable: 1,
        },
        {
          chunk: 2,
          output: reviewOutput({ findings: [finding('c1'), finding('c2')] }),
          warnings: [],
          unreadable: 1,
          removedContextIds: 2,
        },
      ],
      failed: new Map([[1, 'chat completion timeout after 5000 ms']]),
    });
    const out = await parseStage.run(i);
    expect(out.outputs.map((o) => [o.chunk, o.output.findings.map((f) => f.title)])).toEqual([
      [0, ['a']],
      [2, ['c1', 'c2']],
    ]);
    expect(out.warnings).toEqual(['part 1: removed trailing commas from the JSON']);
    expect(out.unreadable).toBe(2);
    expect(out.missing).toEqual([
      '2 findings from the model could not be read (no path or no title)',
      'Part 2 (1 file(s)) could not be analysed: chat completion timeout after 5000 ms',
    ]);
    expect(parseStage.counts(out, i)).toEqual({
      outputs: 2,
      candidates: 3,
      unreadableFindings: 2,
      removedContextIds: 2,
      failedParts: 1,
      warnings: 1,
    });
  });

  test('one part: warnings as they are; one unreadable finding is said in the singular; nothing else', async () => {
    const out = await parseStage.run(
      input(
        {
          outputs: [
            {
              chunk: 0,
              output: reviewOutput(),
              warnings: ['ignored unknown field(s): extra'],
              unreadable: 1,
            },
          ],
        },
        PARTS.slice(0, 1),
      ),
    );
    expect(out.warnings).toEqual(['ignored unknown field(s): extra']);
    expect(out.missing).toEqual(['1 finding from the model could not be read (no path or no title)']);
  });

  test('nothing usable: no candidate, and each failed part said', async () => {
    const out = await parseStage.run(input({ failed: new Map([[0, 'boom']]) }, []));
    expect(out.outputs).toEqual([]);
    expect(out.missing).toEqual(['Part 1 (0 file(s)) could not be analysed: boom']);
  });
});
