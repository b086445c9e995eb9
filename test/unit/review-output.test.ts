import {
  REVIEW_OUTPUT_FIELDS,
  competitorComparisonSchema,
  defaultCompetitorComparison,
  dispositionSchema,
  findingSchema,
  reviewOutputJsonSchema,
  reviewOutputSchema,
  type Finding,
} from '../../src/review/output.schema.js';
import { extractJsonCandidate, isUsableReviewOutput } from '../../src/review/parse-json.js';
import { parseReviewOutput, repairPrompt } from '../../src/review/parse-output.js';

type Json = Record<string, any>;

function comparison(overrides: Json = {}): Json {
  return {
    available: true,
    winner: 'own',
    summary: 'Both reviews found the race.',
    confidence: 4,
    agreements: ['race in queue'],
    competitorMisses: [],
    ownMisses: [],
    strongerCompetitorFindings: [],
    strongerOwnFindings: [],
    actionItems: [],
    ...overrides,
  };
}

/** The smallest object the usability check accepts: empty arrays, no `priorFindingDispositions`. */
function minimal(overrides: Json = {}): Json {
  return {
    overview: 'Adds a retry loop to the webhook client.',
    summary: 'Retry logic for webhook delivery.',
    verdict: 'clear',
    confidenceScore: 4,
    bulletHighlights: [],
    reasoning: 'Small change, covered by tests.',
    mergeVerdict: 'Safe to merge.',
    importantFiles: [],
    findings: [],
    missingValidations: [],
    crossRepoImpact: [],
    sequenceDiagram: '',
    competitorComparison: comparison(),
    ...overrides,
  };
}

function finding(overrides: Json = {}): Json {
  return {
    severity: 'high',
    category: 'correctness',
    path: 'src/a.ts',
    title: 'Retry never stops',
    body: 'The loop has no upper bound.',
    contextIds: [],
    ...overrides,
  };
}

function disposition(overrides: Json = {}): Json {
  return {
    priorReviewKey: 'o/r#1@abc',
    fingerprint: 'fp_0123456789abcdef0123',
    disposition: 'resolved',
    explanation: 'Bounded now.',
    evidence: [{ headSha: 'def', path: 'src/a.ts', quote: 'for (let i = 0; i < 3; i++)' }],
    ...overrides,
  };
}

function full(overrides: Json = {}): Json {
  return minimal({ priorFindingDispositions: [], ...overrides });
}

const NONE = new Set<string>();
/** Parses a reply with no memory-context ids supplied. */
const parse = (reply: string) => parseReviewOutput(reply, { suppliedContextIds: NONE });

describe('output schemas', () => {
  test('findingSchema accepts the six keys, and the four extension keys of NAMES.md', () => {
    expect(findingSchema.safeParse(finding()).success).toBe(true);
    const extended = finding({ line: 42, endLine: 44, suggestion: 'x', confidence: 0.9 });
    expect(findingSchema.parse(extended)).toEqual(extended);
    // Null is how strict structured outputs send an absent optional field.
    expect(findingSchema.safeParse(finding({ line: null, endLine: null, suggestion: null })).success).toBe(
      true,
    );
  });

  test('findingSchema strips any other key: the finding stays', () => {
    expect(findingSchema.parse(finding({ column: 3 }))).toEqual(finding());
  });

  test.each([
    ['a line of 0', finding({ line: 0 })],
    ['a fractional line', finding({ line: 1.5 })],
    ['a confidence over 1', finding({ confidence: 1.5 })],
    ['a missing contextIds', (({ contextIds: _c, ...rest }) => rest)(finding())],
    ['a missing body', (({ body: _b, ...rest }) => rest)(finding())],
    ['an unknown severity', finding({ severity: 'critical' })],
    ['a nit severity', finding({ severity: 'nit' })],
    ['a non-string contextId', finding({ contextIds: [1] })],
  ])('findingSchema rejects %s', (_name, value) => {
    expect(findingSchema.safeParse(value).success).toBe(false);
  });

  test.each(['blocker', 'high', 'medium', 'low'])('findingSchema accepts severity %s', (severity) => {
    expect(findingSchema.safeParse(finding({ severity })).success).toBe(true);
  });

  test('dispositionSchema accepts the three dispositions and rejects others', () => {
    for (const kind of ['resolved', 'false_positive', 'no_longer_applicable']) {
      expect(dispositionSchema.safeParse(disposition({ disposition: kind })).success).toBe(true);
    }
    expect(dispositionSchema.safeParse(disposition({ disposition: 'fixed' })).success).toBe(false);
    expect(
      dispositionSchema.safeParse(disposition({ evidence: [{ headSha: 'x', path: 'a' }] })).success,
    ).toBe(false);
  });

  test.each([
    'available',
    'winner',
    'summary',
    'confidence',
    'agreements',
    'competitorMisses',
    'ownMisses',
    'strongerCompetitorFindings',
    'strongerOwnFindings',
    'actionItems',
  ])('competitorComparisonSchema requires %s', (key) => {
    const value = comparison();
    expect(competitorComparisonSchema.safeParse(value).success).toBe(true);
    delete value[key];
    expect(competitorComparisonSchema.safeParse(value).success).toBe(false);
  });

  test('defaultCompetitorComparison() is the 2.5 default, valid, a fresh copy each time', () => {
    expect(defaultCompetitorComparison()).toEqual({
      available: false,
      winner: 'unclear',
      summary: 'No competitor review was recorded for this pull request.',
      confidence: 1,
      agreements: [],
      competitorMisses: [],
      ownMisses: [],
      strongerCompetitorFindings: [],
      strongerOwnFindings: [],
      actionItems: [],
    });
    expect(competitorComparisonSchema.safeParse(defaultCompetitorComparison()).success).toBe(true);
    const copy = defaultCompetitorComparison();
    copy.agreements.push('x');
    expect(defaultCompetitorComparison().agreements).toEqual([]);
  });

  test('reviewOutputSchema accepts a full object and rejects blank prose and extra keys', () => {
    expect(reviewOutputSchema.safeParse(full({ findings: [finding()] })).success).toBe(true);
    expect(reviewOutputSchema.safeParse(full({ summary: '  ' })).success).toBe(false);
    expect(reviewOutputSchema.safeParse(full({ extra: 1 })).success).toBe(false);
    expect(reviewOutputSchema.safeParse(minimal()).success).toBe(false); // no priorFindingDispositions
  });
});

describe('reviewOutputJsonSchema', () => {
  const schema = reviewOutputJsonSchema();

  function objects(node: unknown, out: Json[] = []): Json[] {
    if (Array.isArray(node)) node.forEach((n) => objects(n, out));
    else if (node !== null && typeof node === 'object') {
      const obj = node as Json;
      if (obj.type === 'object') out.push(obj);
      Object.values(obj).forEach((n) => objects(n, out));
    }
    return out;
  }

  test('top level lists the fourteen fields, all required, no extras, no $schema', () => {
    expect(schema.$schema).toBeUndefined();
    expect(schema.type).toBe('object');
    expect(REVIEW_OUTPUT_FIELDS).toHaveLength(14);
    expect(Object.keys(schema.properties as Json).sort()).toEqual([...REVIEW_OUTPUT_FIELDS].sort());
    expect((schema.required as string[]).sort()).toEqual([...REVIEW_OUTPUT_FIELDS].sort());
    expect(schema.additionalProperties).toBe(false);
  });

  test('the findings come before the conclusions in property order (structured outputs write in that order)', () => {
    const fresh = reviewOutputJsonSchema(); // the shared one's `required` is sorted in place above
    const order = Object.keys(fresh.properties as Json);
    for (const conclusion of ['summary', 'verdict', 'confidenceScore', 'mergeVerdict']) {
      expect(order.indexOf('findings')).toBeLessThan(order.indexOf(conclusion));
    }
    expect(fresh.required).toEqual(order);
  });

  test('every object is strict with all its properties required (OpenAI structured outputs)', () => {
    const all = objects(schema);
    // top level, importantFiles item, finding, disposition, evidence item, competitorComparison
    expect(all.length).toBe(6);
    for (const obj of all) {
      expect(obj.additionalProperties).toBe(false);
      expect([...(obj.required as string[])].sort()).toEqual(Object.keys(obj.properties as Json).sort());
    }
  });

  test('finding items carry the severity enum, six keys and the four nullable extension keys', () => {
    const props = schema.properties as Json;
    const item = props.findings.items as Json;
    expect(item.required).toEqual([
      'severity',
      'category',
      'path',
      'title',
      'body',
      'contextIds',
      'line',
      'endLine',
      'suggestion',
      'confidence',
    ]);
    expect(JSON.stringify(item.properties.line)).toContain('"null"');
    expect(item.properties.severity.enum).toEqual(['blocker', 'high', 'medium', 'low']);
    expect(props.confidenceScore).toMatchObject({ type: 'integer', minimum: 1, maximum: 5 });
    expect(props.verdict.enum).toEqual(['clear', 'needs-attention']);
    expect(props.competitorComparison.properties.winner.enum).toEqual([
      'own',
      'competitor',
      'split',
      'unclear',
    ]);
  });

  test('returns a fresh object each call', () => {
    const a = reviewOutputJsonSchema();
    (a.properties as Json).overview = null;
    expect((reviewOutputJsonSchema().properties as Json).overview).toEqual({ type: 'string' });
  });
});

describe('isUsableReviewOutput', () => {
  test('accepts the minimal valid object', () => {
    expect(isUsableReviewOutput(minimal())).toEqual({ usable: true });
  });

  test.each<[string, unknown, string]>([
    ['null', null, 'payload'],
    ['an array', [minimal()], 'payload'],
    ['a string', 'review', 'payload'],
    ['a number', 5, 'payload'],
  ])('rejects a payload that is %s', (_name, value, needle) => {
    const result = isUsableReviewOutput(value);
    expect(result.usable).toBe(false);
    if (!result.usable) expect(result.problems.join(' ')).toContain(needle);
  });

  const del = (key: string) => {
    const value = minimal();
    delete value[key];
    return value;
  };
  const cmp = (overrides: Json) => minimal({ competitorComparison: comparison(overrides) });
  const cmpWithout = (key: string) => {
    const c = comparison();
    delete c[key];
    return minimal({ competitorComparison: c });
  };

  test.each<[string, Json, string]>([
    ['overview missing', del('overview'), '`overview`'],
    ['overview blank', minimal({ overview: ' \n\t' }), '`overview`'],
    ['overview not a string', minimal({ overview: 1 }), '`overview`'],
    ['summary missing', del('summary'), '`summary`'],
    ['summary blank', minimal({ summary: '' }), '`summary`'],
    ['mergeVerdict blank', minimal({ mergeVerdict: '   ' }), '`mergeVerdict`'],
    ['mergeVerdict not a string', minimal({ mergeVerdict: ['ok'] }), '`mergeVerdict`'],
    ['reasoning missing', del('reasoning'), '`reasoning`'],
    ['reasoning not a string', minimal({ reasoning: 3 }), '`reasoning`'],
    ['sequenceDiagram missing', del('sequenceDiagram'), '`sequenceDiagram`'],
    ['sequenceDiagram null', minimal({ sequenceDiagram: null }), '`sequenceDiagram`'],
    ['verdict missing', del('verdict'), '`verdict`'],
    ['verdict outside its enum', minimal({ verdict: 'approve' }), '`verdict`'],
    ['verdict in another case', minimal({ verdict: 'Clear' }), '`verdict`'],
    ['confidenceScore missing', del('confidenceScore'), '`confidenceScore`'],
    ['confidenceScore 0', minimal({ confidenceScore: 0 }), '`confidenceScore`'],
    ['confidenceScore 6', minimal({ confidenceScore: 6 }), '`confidenceScore`'],
    ['confidenceScore 3.5', minimal({ confidenceScore: 3.5 }), '`confidenceScore`'],
    ['confidenceScore a string', minimal({ confidenceScore: '4' }), '`confidenceScore`'],
    ['bulletHighlights missing', del('bulletHighlights'), '`bulletHighlights`'],
    ['bulletHighlights a string', minimal({ bulletHighlights: 'a' }), '`bulletHighlights`'],
    ['importantFiles an object', minimal({ importantFiles: {} }), '`importantFiles`'],
    ['findings missing', del('findings'), '`findings`'],
    ['findings null', minimal({ findings: null }), '`findings`'],
    ['missingValidations missing', del('missingValidations'), '`missingValidations`'],
    ['crossRepoImpact a string', minimal({ crossRepoImpact: 'none' }), '`crossRepoImpact`'],
    ['competitorComparison missing', del('competitorComparison'), '`competitorComparison`'],
    ['competitorComparison an array', minimal({ competitorComparison: [] }), '`competitorComparison`'],
    ['competitorComparison null', minimal({ competitorComparison: null }), '`competitorComparison`'],
    ['competitorComparison.available missing', cmpWithout('available'), '`competitorComparison.available`'],
    [
      'competitorComparison.available a string',
      cmp({ available: 'true' }),
      '`competitorComparison.available`',
    ],
    ['competitorComparison.summary missing', cmpWithout('summary'), '`competitorComparison.summary`'],
    ['competitorComparison.winner outside its enum', cmp({ winner: 'us' }), '`competitorComparison.winner`'],
    ['competitorComparison.confidence 0', cmp({ confidence: 0 }), '`competitorComparison.confidence`'],
    ['competitorComparison.confidence 2.5', cmp({ confidence: 2.5 }), '`competitorComparison.confidence`'],
    [
      'competitorComparison.agreements missing',
      cmpWithout('agreements'),
      '`competitorComparison.agreements`',
    ],
    ['competitorComparison.competitorMisses', cmp({ competitorMisses: 'x' }), 'competitorMisses`'],
    ['competitorComparison.ownMisses', cmp({ ownMisses: null }), '`competitorComparison.ownMisses`'],
    [
      'competitorComparison.strongerCompetitorFindings',
      cmpWithout('strongerCompetitorFindings'),
      'CompetitorFindings`',
    ],
    [
      'competitorComparison.strongerOwnFindings',
      cmp({ strongerOwnFindings: {} }),
      '`competitorComparison.strongerOwnFindings`',
    ],
    ['competitorComparison.actionItems', cmpWithout('actionItems'), '`competitorComparison.actionItems`'],
  ])('rejects %s (and names it)', (_name, value, needle) => {
    const result = isUsableReviewOutput(value);
    expect(result.usable).toBe(false);
    if (!result.usable) {
      expect(result.problems).toHaveLength(1);
      expect(result.problems[0]).toContain(needle);
    }
  });

  test('reports every problem at once', () => {
    const result = isUsableReviewOutput(minimal({ overview: '', verdict: 'x', findings: 'none' }));
    expect(result.usable).toBe(false);
    if (!result.usable) expect(result.problems).toHaveLength(3);
  });

  test.each<[string, Json]>([
    ['priorFindingDispositions absent', minimal()],
    ['priorFindingDispositions not an array', minimal({ priorFindingDispositions: 'none' })],
    ['priorFindingDispositions with garbage items', minimal({ priorFindingDispositions: [1, { a: 2 }] })],
    [
      'malformed nested findings',
      minimal({ findings: [{ nope: true }, 'text', null, finding({ line: 3 })] }),
    ],
    ['non-string array elements', minimal({ bulletHighlights: [1, null, {}], missingValidations: [false] })],
    ['importantFiles of strings', minimal({ importantFiles: ['src/a.ts'] })],
    ['crossRepoImpact of objects', minimal({ crossRepoImpact: [{ repo: 'x' }] })],
    ['extra top-level properties', minimal({ extra: 1, line: 42 })],
    ['extra competitorComparison properties', cmp({ notes: 'x' })],
    ['non-string competitorComparison array elements', cmp({ agreements: [1, 2], actionItems: [null] })],
    ['a blank reasoning and sequenceDiagram', minimal({ reasoning: '', sequenceDiagram: '' })],
    ['a blank competitorComparison.summary', cmp({ summary: '' })],
  ])('does not check: %s', (_name, value) => {
    expect(isUsableReviewOutput(value)).toEqual({ usable: true });
  });
});

describe('extractJsonCandidate', () => {
  const obj = '{"a":1,"b":{"c":[1,2,{"d":null}]}}';

  test.each<[string, string, string | null]>([
    ['a bare object', obj, obj],
    ['a bare object with surrounding whitespace', `\n\n  ${obj}  \n`, obj],
    ['a ```json fence', '```json\n' + obj + '\n```', obj],
    ['a plain ``` fence', '```\n' + obj + '\n```', obj],
    ['leading and trailing prose', `Here is my review:\n${obj}\nLet me know if you need more.`, obj],
    ['prose and a fence', `Sure! Below.\n\n\`\`\`json\n${obj}\n\`\`\`\n\nThanks.`, obj],
    ['braces inside strings', '{"a":"} { }}}","b":"{"}', '{"a":"} { }}}","b":"{"}'],
    ['escaped quotes inside strings', '{"a":"say \\"}\\" ok","b":2} tail }', '{"a":"say \\"}\\" ok","b":2}'],
    ['an escaped backslash before a closing quote', '{"a":"c:\\\\","b":"}"}', '{"a":"c:\\\\","b":"}"}'],
    ['two objects: the first wins', '{"first":1}\n{"second":2}', '{"first":1}'],
    [
      'two fenced objects: the first wins',
      '```json\n{"first":1}\n```\n```json\n{"second":2}\n```',
      '{"first":1}',
    ],
    ['prose in braces before the object', 'I checked {all files} here: {"a":1}', '{"a":1}'],
    ['an empty object', 'x {} y', '{}'],
    ['an invalid first object (returned as is, not skipped)', '{"a":1,} then {"b":2}', '{"a":1,}'],
    ['only prose braces (first balanced)', 'use {x} and {y}', '{x}'],
    ['no braces', 'I could not review this.', null],
    ['an empty string', '', null],
    ['an object that never closes (nested objects are no candidates)', '{"a": {"b": 1}', null],
    ['prose braces before an object that never closes', 'see {x}: {"a": {"b": 1}', null],
    ['a closed object before one that never closes', '{"a":1} {"b": {"c": 1}', '{"a":1}'],
  ])('%s', (_name, text, expected) => {
    expect(extractJsonCandidate(text)).toBe(expected);
  });

  test('a stray unclosed brace before the object does not hide it', () => {
    expect(extractJsonCandidate('Note { this brace. {"a":1}')).toBe('{"a":1}');
  });
});

describe('parseReviewOutput', () => {
  const text = (value: unknown) => JSON.stringify(value, null, 2);

  test('parses a full object without warnings', () => {
    const value = full({ findings: [finding()], importantFiles: [{ path: 'a', overview: 'b' }] });
    const result = parse(text(value));
    expect(result).toEqual({ ok: true, output: value, warnings: [], unreadable: [], removedContextIds: 0 });
  });

  test('parses inside a fence with prose around', () => {
    const value = full();
    const result = parse(`Here you go:\n\`\`\`json\n${text(value)}\n\`\`\`\nDone.`);
    expect(result.ok && result.output).toEqual(value);
  });

  test('braces and fences inside string values survive', () => {
    const value = full({ sequenceDiagram: 'A -> B { x }\n```\n}}', overview: 'Uses `{}` and "quotes"' });
    const result = parse(`prose ${text(value)} prose {"other":1}`);
    expect(result.ok && result.output.sequenceDiagram).toBe('A -> B { x }\n```\n}}');
    expect(result.ok && result.output.overview).toBe('Uses `{}` and "quotes"');
  });

  test('the first of two objects wins', () => {
    const first = full({ summary: 'first' });
    const second = full({ summary: 'second' });
    const result = parse(`${text(first)}\n${text(second)}`);
    expect(result.ok && result.output.summary).toBe('first');
  });

  test('defaults a missing priorFindingDispositions to []', () => {
    const result = parse(text(minimal()));
    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(result.output.priorFindingDispositions).toEqual([]);
      expect(result.warnings).toEqual([]);
      expect(reviewOutputSchema.safeParse(result.output).success).toBe(true);
    }
  });

  test('keeps well-formed dispositions and drops malformed ones with a warning', () => {
    const good = disposition();
    const result = parse(
      text(minimal({ priorFindingDispositions: [good, disposition({ disposition: 'fixed' }), 7] })),
    );
    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(result.output.priorFindingDispositions).toEqual([good]);
      expect(result.warnings.filter((w) => w.includes('disposition'))).toHaveLength(2);
    }
  });

  test('a non-array priorFindingDispositions becomes [] with a warning', () => {
    const result = parse(text(minimal({ priorFindingDispositions: 'none' })));
    expect(result.ok && result.output.priorFindingDispositions).toEqual([]);
    expect(result.ok && result.warnings.join()).toContain('priorFindingDispositions');
  });

  test('keeps findings matching the schema and drops malformed ones with one warning each', () => {
    const good = finding();
    const findings = [
      good,
      finding({ line: 12, column: 4 }),
      finding({ severity: 'critical' }),
      'text',
      finding({ title: 3 }),
      finding({ line: '12', endLine: 14, suggestion: 'x', confidence: 7 }),
    ];
    const result = parse(text(minimal({ findings })));
    expect(result.ok).toBe(true);
    if (result.ok) {
      // An extension key is kept; any other key is removed and the finding stays; an invalid extension
      // value is removed with what depends on it (a suggestion without its line); `critical` is a
      // blocker; what cannot be used (not an object, no title) is counted, never dropped silently.
      expect(result.output.findings).toEqual([
        good,
        finding({ line: 12 }),
        finding({ severity: 'blocker' }),
        good,
      ]);
      expect(result.unreadable).toEqual([
        { index: 3, reason: 'finding 3 is the string "text", not an object' },
        { index: 4, reason: 'finding 4 has no `title`' },
      ]);
      expect(result.warnings).toContain('removed unknown finding key(s): column');
      expect(result.warnings).toContain(
        'removed invalid `line`, `endLine`, `suggestion`, `confidence` of finding 5',
      );
    }
  });

  test('removes contextIds that were not supplied and counts them', () => {
    const findings = [
      finding({ contextIds: ['mem_1', 'mem_x', 'mem_y'] }),
      finding({ contextIds: ['mem_2', 'knowledge:src/api'] }),
      finding({ contextIds: ['bogus', 'knowledge:src'] }),
      finding({ contextIds: [] }),
    ];
    // Knowledge documents are cited by `knowledge:<path>`, kept when given like a context's id.
    const result = parseReviewOutput(text(minimal({ findings })), {
      suppliedContextIds: new Set(['mem_1', 'mem_2', 'knowledge:src/api']),
    });
    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(result.output.findings.map((f: Finding) => f.contextIds)).toEqual([
        ['mem_1'],
        ['mem_2', 'knowledge:src/api'],
        [],
        [],
      ]);
      expect(result.removedContextIds).toBe(4);
      expect(result.warnings).toHaveLength(1);
      expect(result.warnings[0]).toContain('4 unsupported contextIds');
      expect(result.warnings[0]).toContain('2 findings');
    }
  });

  test('with no supplied ids every contextId is removed', () => {
    const result = parse(text(minimal({ findings: [finding({ contextIds: ['a'] })] })));
    expect(result.ok && result.output.findings[0]?.contextIds).toEqual([]);
    expect(result.ok && result.warnings[0]).toContain('1 unsupported contextId ');
  });

  test('coerces competitorComparison through its schema', () => {
    const value = minimal({
      competitorComparison: comparison({ notes: 'extra', agreements: ['a', 1, null, 'b'] }),
    });
    const result = parse(text(value));
    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(result.output.competitorComparison).toEqual(comparison({ agreements: ['a', 'b'] }));
      expect(competitorComparisonSchema.safeParse(result.output.competitorComparison).success).toBe(true);
      expect(result.warnings.join()).toContain('competitorComparison.agreements');
    }
  });

  test('drops non-string array elements, malformed important files and unknown fields, with warnings', () => {
    const value = minimal({
      bulletHighlights: ['a', 2],
      missingValidations: [null, 'tests not run'],
      crossRepoImpact: [{}],
      importantFiles: [{ path: 'a', overview: 'b' }, 'c', { path: 'd' }],
      line: 9,
    });
    const result = parse(text(value));
    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(result.output.bulletHighlights).toEqual(['a']);
      expect(result.output.missingValidations).toEqual(['tests not run']);
      expect(result.output.crossRepoImpact).toEqual([]);
      // A bare path where `{path, overview}` belongs is read as the path.
      expect(result.output.importantFiles).toEqual([
        { path: 'a', overview: 'b' },
        { path: 'c', overview: '' },
      ]);
      expect(result.output).not.toHaveProperty('line');
      expect(result.warnings).toHaveLength(5);
      expect(reviewOutputSchema.safeParse(result.output).success).toBe(true);
    }
  });

  test.each<[string, string, RegExp]>([
    ['no JSON', 'I am unable to review this pull request.', /contains no JSON object/],
    ['an empty reply', '   ', /empty/],
    ['an unterminated object', '```json\n{"overview": "x", "findings": [\n', /never closed/],
    [
      'a truncated object holding complete inner objects',
      '{"importantFiles": [{"path": "a", "overview": "b"}',
      /at character 0 .*never closed/,
    ],
    [
      'prose braces then a truncated object',
      'see {x}: {"overview": "x", "findings": [',
      /at character 9 .*never closed/,
    ],
    ['invalid JSON (a missing comma)', '{"overview": "x" "summary": "y"}', /not valid JSON: .+/],
    [
      'a trailing comma is read, then the object is checked',
      '{"overview": "x",}',
      /not a usable review output/,
    ],
    ['invalid JSON (single quotes)', "Review: {'overview': 'x'}", /not valid JSON/],
    [
      'an unusable object',
      '{"overview": ""}',
      /not a usable review output: `overview` must be a non-blank string/,
    ],
  ])('fails precisely on %s', (_name, input, pattern) => {
    const result = parse(input);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error).toMatch(pattern);
      expect(result.raw).toBe(input);
    }
  });

  test('the unusable error lists every problem', () => {
    const result = parse(text(minimal({ verdict: 'ok', confidenceScore: 9 })));
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error).toContain(
        '`verdict` must be one of "clear", "needs-attention", got the string "ok"',
      );
      expect(result.error).toContain('`confidenceScore` must be an integer from 1 to 5, got number 9');
    }
  });

  test('repairPrompt carries the error and the field contract', () => {
    const prompt = repairPrompt('The response contains no JSON object.');
    expect(prompt).toContain('The response contains no JSON object.');
    for (const field of REVIEW_OUTPUT_FIELDS) expect(prompt).toContain(field);
    expect(prompt).toMatch(/exactly one JSON object/);
  });
});
