import { Writable } from 'node:stream';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import {
  ARTIFACT_CONTENT_TYPE,
  isExecutionClaim,
  keySegment,
  processEvidence,
  type EvidenceArtifact,
  type ProcessEvidenceInput,
  type EvidenceFinding,
} from '../../src/evidence/artifacts.js';
import { claimsExecution, detectExecutionClaim } from '../../src/evidence/claims.js';
import { renderEvidence } from '../../src/evidence/render.js';
import type { ArtifactStorage } from '../../src/evidence/storage.js';
import { createLogger } from '../../src/logger.js';
import { commandArtifacts, type CommandResult, type ValidationOutcome } from '../../src/validation/types.js';

/** review-engine 2.6: evidence artifacts, the require flag, the failure path; the claim detector; rendering. */

type Line = Record<string, unknown> & { event?: string; level: number; msg?: string };

/** A pino logger (the project's) writing into an array of parsed lines. */
function capturedLog() {
  const lines: Line[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const text of chunk.toString('utf8').split('\n').filter(Boolean))
        lines.push(JSON.parse(text) as Line);
      done();
    },
  });
  return { log: createLogger('info', stream), lines };
}

/** An in-memory store that records each put; `failOn` makes the put of a key throw. */
function memoryStorage(options: { failOn?: string; kind?: 'local' | 's3' } = {}) {
  const puts: Array<{ key: string; body: string; contentType: string }> = [];
  const storage: ArtifactStorage = {
    kind: options.kind ?? 'local',
    async put({ key, body, contentType }) {
      if (options.failOn !== undefined && key.includes(options.failOn)) {
        throw new Error(`store unavailable: connect ECONNREFUSED (${key})`);
      }
      puts.push({ key, body: body.toString(), contentType });
      return {
        key: `stored/${key}`,
        url: options.kind === 's3' ? `https://s3.test/b/stored/${key}?X-Amz-Signature=abc` : null,
      };
    },
  };
  return { storage, puts };
}

function command(check: CommandResult['check'], cmd: string, exitCode: number): CommandResult {
  return {
    check,
    command: cmd,
    exitCode,
    signal: null,
    durationMs: 1200,
    timedOut: false,
    outputTail: `output of ${cmd}`,
    outputBytes: 100_000,
    outputTruncated: exitCode !== 0,
  };
}

/** A failed local validation (tests fail, lint passes) with a shadow bubblewrap run of the same commands. */
function outcome(): ValidationOutcome {
  const commands = [command('test', 'npm test', 1), command('lint', 'npm run lint', 0)];
  const shadowCommands = [command('test', 'npm test', 0), command('lint', 'npm run lint', 0)];
  return {
    executor: 'shadow',
    status: 'failed',
    evidence: 'FAILED local: npm test',
    commands,
    artifacts: commandArtifacts('local', commands),
    shadow: {
      executor: 'bubblewrap',
      status: 'passed',
      evidence: 'PASSED bubblewrap: npm test, npm run lint',
      commands: shadowCommands,
      artifacts: shadowCommands.map((c, i) => ({
        id: `bubblewrap-${i + 1}-${c.check}`,
        kind: 'command_output',
        command: c.command,
        content: `shadow ${c.outputTail}`,
      })),
    },
  };
}

type Finding = EvidenceFinding & { path: string };

const FROM_COMMAND: Finding = {
  path: 'src/a.ts',
  severity: 'high',
  category: 'correctness',
  title: 'Tests fail on the empty list',
  body: 'The command failed.',
  validationCommand: 'npm test',
};
const VALIDATION: Finding = {
  path: '',
  severity: 'medium',
  category: 'validation',
  title: 'Validation failed',
  body: 'FAILED local: npm test',
};
const QUOTES_LINT: Finding = {
  path: 'src/b.ts',
  severity: 'low',
  category: 'style',
  title: 'Unused import',
  body: 'I ran `npm run lint` and it reports an unused import.',
};
const NAMES_TYPECHECK: Finding = {
  path: 'src/c.ts',
  severity: 'high',
  category: 'correctness',
  title: 'Type error in parse()',
  body: 'The type check failed with TS2345 on this line.',
};
const READING: Finding = {
  path: 'src/d.ts',
  severity: 'medium',
  category: 'correctness',
  title: 'Missing null check',
  body: '`user` may be undefined here; this would throw when the session expired.',
};
const FINDINGS = [FROM_COMMAND, VALIDATION, QUOTES_LINT, NAMES_TYPECHECK, READING];

/**
 * processEvidence, enabled without the require flag, over `outcome()` for the run `r` with no findings, an
 * in-memory store (of `storageOptions`) and a captured log, each overridden by `over`.
 */
async function runEvidence(
  over: Partial<ProcessEvidenceInput<Finding>> = {},
  storageOptions: Parameters<typeof memoryStorage>[0] = {},
) {
  const { storage, puts } = memoryStorage(storageOptions);
  const { log, lines } = capturedLog();
  const result = await processEvidence({
    enabled: true,
    requireArtifacts: false,
    storage,
    runId: 'r',
    outcome: outcome(),
    findings: [],
    log,
    ...over,
  });
  return { result, puts, lines };
}

describe('processEvidence: disabled', () => {
  test.each([false, true])(
    'returns the findings unchanged, stores and logs nothing (requireArtifacts %s has no effect)',
    async (requireArtifacts) => {
      const findings = FINDINGS.map((f) => ({ ...f }));
      const { result, puts, lines } = await runEvidence({ enabled: false, requireArtifacts, findings });
      expect(result.findings).toBe(findings);
      expect(result.findings).toEqual(FINDINGS);
      expect(result).toMatchObject({ artifacts: [], failed: null });
      for (const f of result.findings) {
        expect(Object.keys(f).filter((k) => /^(evidence|downgraded)/.test(k))).toEqual([]);
      }
      expect(puts).toEqual([]);
      expect(lines).toEqual([]);
    },
  );
});

describe('processEvidence: enabled', () => {
  test('stores every command output (the shadow run too) under runs/<runId>/<id>.log and logs the count', async () => {
    const { result, puts, lines } = await runEvidence({ runId: 'run-42' }, { kind: 's3' });
    expect(puts.map((p) => p.key)).toEqual([
      'runs/run-42/local-1-test.log',
      'runs/run-42/local-2-lint.log',
      'runs/run-42/shadow-bubblewrap-1-test.log',
      'runs/run-42/shadow-bubblewrap-2-lint.log',
    ]);
    expect(new Set(puts.map((p) => p.contentType))).toEqual(new Set([ARTIFACT_CONTENT_TYPE]));
    expect(puts[0]!.body).toBe(
      '$ npm test\n# exit code 1 after 1200 ms\n# output truncated: the last 18 of 100000 bytes\n\noutput of npm test',
    );
    expect(puts[2]!.body).toContain('# shadow validation: not evidence about the primary run');
    expect(puts[2]!.body.endsWith('\n\nshadow output of npm test')).toBe(true);
    expect(result.artifacts).toEqual([
      {
        id: 'local-1-test',
        key: 'stored/runs/run-42/local-1-test.log',
        url: 'https://s3.test/b/stored/runs/run-42/local-1-test.log?X-Amz-Signature=abc',
        kind: 'command_output',
      },
      expect.objectContaining({ id: 'local-2-lint', key: 'stored/runs/run-42/local-2-lint.log' }),
      expect.objectContaining({ id: 'shadow-bubblewrap-1-test' }),
      expect.objectContaining({ id: 'shadow-bubblewrap-2-lint' }),
    ]);
    expect(result.failed).toBeNull();
    expect(lines).toEqual([
      expect.objectContaining({
        level: 30,
        event: 'evidence_artifacts_persisted',
        runId: 'run-42',
        count: 4,
        storage: 's3',
      }),
    ]);
  });

  test('attaches the matching primary outputs to execution claims only; no status without the require flag', async () => {
    const { result } = await runEvidence({ findings: FINDINGS });
    const ids = (f: { evidenceArtifacts?: EvidenceArtifact[] }) => f.evidenceArtifacts?.map((a) => a.id);
    const [fromCommand, validation, quotesLint, namesTypecheck, reading] = result.findings;
    expect(ids(fromCommand!)).toEqual(['local-1-test']);
    // A validation finding gets the failed commands' outputs; the shadow's are never attached.
    expect(ids(validation!)).toEqual(['local-1-test']);
    expect(ids(quotesLint!)).toEqual(['local-2-lint']);
    // A type check claim, but no type check ran: nothing to attach, and no flag to mark it.
    expect(namesTypecheck).toEqual(NAMES_TYPECHECK);
    expect(reading).toBe(READING);
    for (const f of result.findings) expect(f.evidenceStatus).toBeUndefined();
    expect(fromCommand!.evidenceArtifacts![0]).toEqual({
      id: 'local-1-test',
      key: 'stored/runs/r/local-1-test.log',
      url: null,
      kind: 'command_output',
    });
    // The rest of the finding is kept as it was.
    expect(fromCommand).toMatchObject(FROM_COMMAND);
  });

  test('with the require flag: claims without artifacts are unverified (severity kept), claims with them verified', async () => {
    const unmatched: Finding = { ...FROM_COMMAND, validationCommand: 'npm run build', severity: 'critical' };
    const { result } = await runEvidence({ requireArtifacts: true, findings: [...FINDINGS, unmatched] });
    expect(result.findings).toHaveLength(6);
    const [fromCommand, validation, quotesLint, namesTypecheck, reading, cited] = result.findings;
    for (const f of [fromCommand!, validation!, quotesLint!]) {
      expect(f.evidenceStatus).toBe('verified');
      expect(f.downgradedReason).toBeUndefined();
    }
    expect(namesTypecheck).toEqual({
      ...NAMES_TYPECHECK,
      evidenceStatus: 'unverified',
      downgradedReason:
        'It reports something as run or observed, but none of the commands this review ran (`npm test`, `npm run lint`) matches it.',
    });
    expect(cited).toEqual({
      ...unmatched,
      evidenceStatus: 'unverified',
      downgradedReason:
        'It cites the command `npm run build`, but this review stored no output of that command.',
    });
    expect(cited!.severity).toBe('critical');
    expect(reading).toBe(READING);
  });

  test('no validation outcome: nothing stored, claims are unverified under the require flag', async () => {
    const { result, puts, lines } = await runEvidence({
      requireArtifacts: true,
      outcome: null,
      findings: [VALIDATION, READING],
    });
    expect(puts).toEqual([]);
    expect(result.artifacts).toEqual([]);
    expect(result.findings[0]).toMatchObject({
      severity: 'medium',
      evidenceStatus: 'unverified',
      downgradedReason: expect.stringContaining('ran no command'),
    });
    expect(result.findings[1]).toBe(READING);
    expect(lines).toEqual([expect.objectContaining({ event: 'evidence_artifacts_persisted', count: 0 })]);
  });

  test('no storage: logs no_artifact_storage, stores nothing, claims unverified under the require flag', async () => {
    const { result, lines } = await runEvidence({
      requireArtifacts: true,
      storage: null,
      findings: [FROM_COMMAND, READING],
    });
    expect(result.artifacts).toEqual([]);
    expect(result.failed).toBeNull();
    expect(result.findings[0]).toEqual({
      ...FROM_COMMAND,
      evidenceStatus: 'unverified',
      downgradedReason: expect.stringContaining('no artifact storage is configured'),
    });
    expect(result.findings[1]).toBe(READING);
    expect(lines.map((l) => [l.level, l.event, l.outputs])).toEqual([[30, 'no_artifact_storage', 4]]);
  });

  test('a store that throws: evidence_artifacts_failed at warn, the original findings, failed set', async () => {
    const findings = [FROM_COMMAND, NAMES_TYPECHECK, READING];
    const { result, lines } = await runEvidence(
      { requireArtifacts: true, findings },
      { failOn: 'local-2-lint' },
    );
    expect(result.findings).toBe(findings);
    expect(result.findings).toEqual([FROM_COMMAND, NAMES_TYPECHECK, READING]);
    expect(result.artifacts).toEqual([]);
    expect(result.failed).toBe('store unavailable: connect ECONNREFUSED (runs/r/local-2-lint.log)');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, event: 'evidence_artifacts_failed', runId: 'r' });
    expect((lines[0]!.err as { message: string }).message).toBe(result.failed);
  });

  test('a run id or artifact id cannot steer the key out of runs/<runId>/', async () => {
    const o = outcome();
    o.artifacts[0]!.id = '../../etc/passwd';
    o.artifacts[1]!.id = '../../etc/passwd';
    delete o.shadow;
    const { puts } = await runEvidence({ runId: '../x y', outcome: o });
    expect(puts.map((p) => p.key)).toEqual([
      'runs/.._x_y/.._.._etc_passwd.log',
      'runs/.._x_y/.._.._etc_passwd-2.log',
    ]);
    expect(['..', '.', ''].map(keySegment)).toEqual(['__', '_', '_']);
  });
});

describe('execution claims', () => {
  test('a finding is one by its category, its validation command, or its prose', () => {
    const base = { severity: 'low', category: 'style', title: 'Naming', body: 'Rename x to count.' };
    expect(isExecutionClaim(base)).toBe(false);
    expect(isExecutionClaim({ ...base, category: ' Validation ' })).toBe(true);
    expect(isExecutionClaim({ ...base, validationCommand: 'npm test' })).toBe(true);
    expect(isExecutionClaim({ ...base, validationCommand: '  ' })).toBe(false);
    expect(isExecutionClaim({ ...base, title: 'Tests are failing' })).toBe(true);
  });

  test.each([
    ['I ran `npm test` and three tests failed.', 'first_person_run'],
    ["We've run the suite locally.", 'first_person_run'],
    ['When I ran the tests they failed on the empty list case.', 'first_person_run'],
    ['I was able to reproduce the crash with an empty payload.', 'first_person_run'],
    ['The tests were run against main and the new one is red.', 'check_was_run'],
    ['Reproduced locally with Node 20.', 'check_was_run'],
    ['This leak was observed at runtime under load.', 'check_was_run'],
    ['Running `npm run build` failed with TS2345 in src/a.ts.', 'running_then_result'],
    ['The build fails with TS2345: Argument of type string is not assignable.', 'check_outcome'],
    ['The unit tests are failing after this change.', 'check_outcome'],
    ['Lint passed, but the type check errored.', 'check_outcome'],
    ['The type check failed with TS2345 on this line.', 'check_outcome'],
    ['CI is red on this branch.', 'check_outcome'],
    ['The test output shows `expected 1, received 2`.', 'run_output'],
    ['The stack trace shows the error comes from parse().', 'run_output'],
    ['Calling it with an empty list, I got this error: TypeError.', 'run_output'],
    ['The process exited with code 1.', 'exit_code'],
    ['The command returned a non-zero exit code.', 'exit_code'],
    ['The exit status was 2.', 'exit_code'],
    ['At runtime we saw the cache grow without bound.', 'runtime_observation'],
    ['In my local run the request hung for 30 seconds.', 'runtime_observation'],
  ])('claims: %s', (text, rule) => {
    expect(detectExecutionClaim(text)?.rule).toBe(rule);
  });

  test.each([
    'This will break the build.',
    'This change would make the tests fail on Windows.',
    'Consider running the tests before merging.',
    'Run `npm test` to verify the fix.',
    'Please verify the build passes.',
    'The function executes the query twice per request.',
    'If the input is empty, the parser could throw at runtime.',
    'I did not run the tests.',
    "We haven't run the migration.",
    'The tests were not run for this change.',
    'The script should exit with code 1 when the flag is missing.',
    'The CLI exits with code 1 when the flag is missing.',
    'Add a test for the null case.',
    'The build step is missing from the CI workflow.',
    'If the flag is unset, the build fails.',
    'Make sure the tests pass before merging.',
    '`user` may be undefined here.',
    'I noticed the function lacks a null check.',
    'We run migrations at startup, which is slow.',
    'This function returns null when the list is empty.',
    'Calling `save()` twice throws a duplicate key error.',
    'The new test never exercises the error branch.',
    'Check whether the tests passed on CI.',
    'Tests for this module probably fail on CI too.',
    'Suggested fix:\n```ts\n// I ran into this before; the tests failed\nconst out = run();\n```',
  ])('does not claim: %s', (text) => {
    expect(detectExecutionClaim(text)).toBeNull();
    expect(claimsExecution(text)).toBe(false);
  });
});

describe('renderEvidence', () => {
  test('kind and link, or kind and the key as code when there is no URL', () => {
    expect(
      renderEvidence([
        {
          id: 'a',
          key: 'runs/r1/local-1-test.log',
          url: 'https://files.test/runs/r1/local-1-test.log',
          kind: 'command_output',
        },
        { id: 'b', key: 'runs/r1/local-2-lint.log', url: null, kind: 'command_output' },
      ]),
    ).toBe(
      '- command_output: [runs/r1/local-1-test.log](https://files.test/runs/r1/local-1-test.log)\n' +
        '- command_output: `runs/r1/local-2-lint.log`',
    );
    expect(renderEvidence([])).toBe('');
  });

  test('keys and URLs cannot open Markdown or HTML of their own', () => {
    expect(
      renderEvidence([
        { id: 'a', key: 'x](javascript:alert(1))<b>', url: 'https://h.test/a b(1)', kind: 'command_output' },
      ]),
    ).toBe('- command_output: [x\\]\\(javascript:alert\\(1\\)\\)\\<b\\>](https://h.test/a%20b%281%29)');
    // A URL that is not http(s) is not linked: the key is shown.
    expect(
      renderEvidence([{ id: 'a', key: 'k.log', url: 'javascript:alert(1)', kind: 'command_output' }]),
    ).toBe('- command_output: `k.log`');
    // Backticks in a key: a longer fence.
    expect(renderEvidence([{ id: 'a', key: 'a`b``c', url: null, kind: 'command_output' }])).toBe(
      '- command_output: ```a`b``c```',
    );
  });
});

describe('evidence configuration', () => {
  test('defaults: off, not required, the local store in evidence/ beside the SQLite store', () => {
    expect(loadConfig({}).evidence).toEqual({
      enabled: false,
      requireArtifacts: false,
      store: { kind: 'local', dir: 'data/evidence' },
      publicBaseUrl: null,
    });
    expect(loadConfig({ VERDICT_DB_PATH: '/var/lib/verdict/store.sqlite' }).evidence.store).toEqual({
      kind: 'local',
      dir: '/var/lib/verdict/evidence',
    });
    expect(loadConfig({ VERDICT_DB_PATH: ':memory:' }).evidence.store).toEqual({
      kind: 'local',
      dir: 'data/evidence',
    });
    expect(loadConfig({ VERDICT_EVIDENCE_DIR: '/srv/ev' }).evidence.store).toEqual({
      kind: 'local',
      dir: '/srv/ev',
    });
  });

  test('the flags, the public base URL, none and s3', () => {
    const on = loadConfig({
      VERDICT_EVIDENCE_ARTIFACTS: 'true',
      REVIEWBOT_EVIDENCE_REQUIRE_ARTIFACTS: '1',
      VERDICT_EVIDENCE_PUBLIC_BASE_URL: 'https://files.test/ev/',
      VERDICT_EVIDENCE_STORE: 'none',
    }).evidence;
    expect(on).toEqual({
      enabled: true,
      requireArtifacts: true,
      store: { kind: 'none' },
      publicBaseUrl: 'https://files.test/ev',
    });
    expect(
      loadConfig({
        VERDICT_EVIDENCE_STORE: 's3',
        VERDICT_EVIDENCE_S3_BUCKET: 'b',
        VERDICT_EVIDENCE_S3_ENDPOINT: 'http://127.0.0.1:9000',
        VERDICT_EVIDENCE_S3_PREFIX: '/verdict/evidence/',
        VERDICT_EVIDENCE_S3_FORCE_PATH_STYLE: '1',
      }).evidence.store,
    ).toEqual({
      kind: 's3',
      bucket: 'b',
      region: 'us-east-1',
      endpoint: 'http://127.0.0.1:9000',
      prefix: 'verdict/evidence',
      forcePathStyle: true,
    });
  });

  test('s3 without a bucket stops start-up naming the variable; bad values are refused', () => {
    expect(() => loadConfig({ VERDICT_EVIDENCE_STORE: 's3' })).toThrow(
      new ConfigError('VERDICT_EVIDENCE_S3_BUCKET', 'must be set with VERDICT_EVIDENCE_STORE=s3'),
    );
    expect(() => loadConfig({ VERDICT_EVIDENCE_STORE: 's3' })).toThrow(
      'Invalid configuration: VERDICT_EVIDENCE_S3_BUCKET must be set with VERDICT_EVIDENCE_STORE=s3',
    );
    expect(() => loadConfig({ VERDICT_EVIDENCE_ARTIFACTS: 'yes' })).toThrow(
      expect.objectContaining({ variable: 'VERDICT_EVIDENCE_ARTIFACTS' }),
    );
    expect(() => loadConfig({ VERDICT_EVIDENCE_STORE: 'gcs' })).toThrow(/one of local, s3, none/);
    expect(() => loadConfig({ VERDICT_EVIDENCE_S3_ENDPOINT: 'minio:9000' })).toThrow(
      expect.objectContaining({ variable: 'VERDICT_EVIDENCE_S3_ENDPOINT' }),
    );
  });
});
