import {
  MIN_QUOTE_NON_SPACE_CHARS,
  UNRESOLVED_CONFIDENCE_CAP,
  applyConfidenceCap,
  normaliseWhitespace,
  reviewDispositions,
  type FileAtHead,
} from '../../src/review/dispositions.js';
import type { Disposition, DispositionEvidence } from '../../src/review/output.schema.js';

const HEAD = 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678';
const OLD_HEAD = 'ffffffffffffffffffffffffffffffffffffffff';
const FP = 'fp_0123456789abcdef0123';
const OTHER_FP = 'fp_aaaaaaaaaaaaaaaaaaaa';

const FILES: Record<string, string> = {
  'src/queue/worker.ts': [
    'export async function retry(fn: () => Promise<void>) {',
    '  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {',
    '    try {',
    '      return await fn();',
    '    } catch {',
    '      await sleep(backoff(attempt));',
    '    }',
    '  }',
    '}',
  ].join('\n'),
  'src/empty.ts': '',
};

function files(): { fileAtHead: FileAtHead; calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    fileAtHead: async (path) => {
      calls.push(path);
      return FILES[path] ?? null;
    },
  };
}

function ev(overrides: Partial<DispositionEvidence> = {}): DispositionEvidence {
  return {
    headSha: HEAD,
    path: 'src/queue/worker.ts',
    quote: 'for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {',
    ...overrides,
  };
}

function disp(overrides: Partial<Disposition> = {}): Disposition {
  return {
    priorReviewKey: 'acme/api#7@' + OLD_HEAD,
    fingerprint: FP,
    disposition: 'resolved',
    explanation: 'The loop is bounded by MAX_ATTEMPTS now.',
    evidence: [ev()],
    ...overrides,
  };
}

async function review(dispositions: Disposition[], fileAtHead: FileAtHead = files().fileAtHead) {
  return reviewDispositions(dispositions, { headSha: HEAD, priorFingerprints: new Set([FP]), fileAtHead });
}

describe('reviewDispositions: accepted', () => {
  test.each<[string, Disposition]>([
    ['an exact one-line quote', disp()],
    ['a multi-line quote', disp({ evidence: [ev({ quote: '    try {\n      return await fn();' })] })],
    [
      'a quote re-indented and re-wrapped',
      disp({ evidence: [ev({ quote: 'try {   return await fn();\n\n } catch {' })] }),
    ],
    [
      'a quote with surrounding whitespace',
      disp({ evidence: [ev({ quote: '\n   await sleep(backoff(attempt));  \n' })] }),
    ],
    ['a ./ path', disp({ evidence: [ev({ path: './src/queue/worker.ts' })] })],
    ['an upper-case head sha', disp({ evidence: [ev({ headSha: HEAD.toUpperCase() })] })],
    [
      'one good item among bad ones',
      disp({ evidence: [ev({ headSha: OLD_HEAD }), ev({ quote: 'nope nope nope' }), ev()] }),
    ],
    ['false_positive', disp({ disposition: 'false_positive' })],
    ['no_longer_applicable', disp({ disposition: 'no_longer_applicable' })],
    ['a quote of exactly the minimum length', disp({ evidence: [ev({ quote: ' attempt) ' })] })],
  ])('%s', async (_name, disposition) => {
    const result = await review([disposition]);
    expect(result).toEqual({
      accepted: [disposition],
      rejected: [],
      missingValidations: [],
      confidenceCap: null,
    });
  });
});

describe('reviewDispositions: rejected (the concern stays open)', () => {
  test.each<[string, Disposition, RegExp]>([
    ['an unknown fingerprint', disp({ fingerprint: OTHER_FP }), /not a finding of a prior review/],
    ['no evidence', disp({ evidence: [] }), /no evidence/],
    [
      'evidence from the old head',
      disp({ evidence: [ev({ headSha: OLD_HEAD })] }),
      /quotes head ffffffffffff, not the current head a1b2c3d4e5f6/,
    ],
    [
      'an abbreviated head sha',
      disp({ evidence: [ev({ headSha: HEAD.slice(0, 7) })] }),
      /not the current head/,
    ],
    ['an empty head sha', disp({ evidence: [ev({ headSha: '' })] }), /quotes head \(none\)/],
    [
      'a quote absent from the file',
      disp({ evidence: [ev({ quote: 'for (;;) { await fn(); }' })] }),
      /does not occur in src\/queue\/worker.ts/,
    ],
    [
      'a quote split differently than the code',
      disp({ evidence: [ev({ quote: 'tr y { return await fn();' })] }),
      /does not occur/,
    ],
    [
      'a missing file',
      disp({ evidence: [ev({ path: 'src/queue/gone.ts' })] }),
      /src\/queue\/gone.ts does not exist at the current head/,
    ],
    ['an empty quote', disp({ evidence: [ev({ quote: '' })] }), /shorter than 8 non-space characters/],
    ['a whitespace-only quote', disp({ evidence: [ev({ quote: ' \n\t ' })] }), /shorter than 8/],
    ['a too-short quote that does occur', disp({ evidence: [ev({ quote: 'try {' })] }), /shorter than 8/],
    [
      'a 7-character quote that does occur',
      disp({ evidence: [ev({ quote: ' attempt ' })] }),
      /shorter than 8/,
    ],
    [
      'a quote against an empty file',
      disp({ evidence: [ev({ path: 'src/empty.ts' })] }),
      /does not occur in src\/empty.ts/,
    ],
    ['an empty path', disp({ evidence: [ev({ path: '  ' })] }), /names no file/],
  ])('%s', async (_name, disposition, reason) => {
    const result = await review([disposition]);
    expect(result.accepted).toEqual([]);
    expect(result.rejected).toHaveLength(1);
    expect(result.rejected[0]?.disposition).toBe(disposition);
    expect(result.rejected[0]?.reason).toMatch(reason);
    expect(result.missingValidations).toHaveLength(1);
    expect(result.missingValidations[0]).toContain(disposition.fingerprint);
    expect(result.missingValidations[0]).toContain(`"${disposition.disposition}"`);
    expect(result.missingValidations[0]).toMatch(reason);
    expect(result.confidenceCap).toBe(3);
  });

  test('lists the problem of every evidence item', async () => {
    const disposition = disp({ evidence: [ev({ headSha: OLD_HEAD }), ev({ path: 'nope.ts' })] });
    const result = await review([disposition]);
    expect(result.rejected[0]?.reason).toMatch(
      /evidence 1: .*not the current head.*; evidence 2: nope.ts does not exist/,
    );
  });

  test('an unknown fingerprint is rejected without reading files', async () => {
    const { fileAtHead, calls } = files();
    await review([disp({ fingerprint: OTHER_FP })], fileAtHead);
    expect(calls).toEqual([]);
  });

  test('a throwing fileAtHead rejects the evidence instead of failing', async () => {
    const result = await review([disp()], async () => {
      throw new Error('GitHub 502');
    });
    expect(result.rejected[0]?.reason).toContain('could not be read at the current head (GitHub 502)');
    expect(result.confidenceCap).toBe(3);
  });
});

describe('reviewDispositions: several', () => {
  test('splits accepted and rejected, in order, with one missing validation per rejection', async () => {
    const good = disp();
    const badHead = disp({ evidence: [ev({ headSha: OLD_HEAD })] });
    const unknown = disp({ fingerprint: OTHER_FP });
    const result = await review([badHead, good, unknown]);
    expect(result.accepted).toEqual([good]);
    expect(result.rejected.map((r) => r.disposition)).toEqual([badHead, unknown]);
    expect(result.missingValidations).toHaveLength(2);
    expect(result.missingValidations[1]).toContain(OTHER_FP);
    expect(result.confidenceCap).toBe(UNRESOLVED_CONFIDENCE_CAP);
  });

  test('nothing to review: no cap', async () => {
    expect(await review([])).toEqual({
      accepted: [],
      rejected: [],
      missingValidations: [],
      confidenceCap: null,
    });
  });

  test('reads each file once, by its normalised path', async () => {
    const { fileAtHead, calls } = files();
    await review(
      [
        disp(),
        disp({ evidence: [ev({ path: './src/queue/worker.ts', quote: 'await sleep(backoff(attempt));' })] }),
      ],
      fileAtHead,
    );
    expect(calls).toEqual(['src/queue/worker.ts']);
  });
});

describe('helpers', () => {
  test('MIN_QUOTE_NON_SPACE_CHARS is 8 and UNRESOLVED_CONFIDENCE_CAP is 3', () => {
    expect(MIN_QUOTE_NON_SPACE_CHARS).toBe(8);
    expect(UNRESOLVED_CONFIDENCE_CAP).toBe(3);
  });

  test('normaliseWhitespace collapses runs and trims', () => {
    expect(normaliseWhitespace('\n  a \t\r\n b  ')).toBe('a b');
  });

  test.each<[number, number | null, number]>([
    [5, 3, 3],
    [4, 3, 3],
    [3, 3, 3],
    [2, 3, 2],
    [5, null, 5],
    [1, null, 1],
  ])('applyConfidenceCap(%d, %p) = %d', (score, cap, expected) => {
    expect(applyConfidenceCap(score, cap)).toBe(expected);
  });
});
