/**
 * Evidence artifacts of findings (review-engine 2.6; issue 26 item 5; docs/evidence.md).
 *
 * With VERDICT_EVIDENCE_ARTIFACTS=1 the output of each validation command is stored (an ArtifactStorage)
 * and attached, as `{id, key, url, kind}`, to the findings that are execution claims. With
 * VERDICT_EVIDENCE_REQUIRE_ARTIFACTS=1 an execution claim left without an artifact is marked
 * `evidenceStatus: 'unverified'` with a `downgradedReason`; its severity is unchanged and it is kept. The
 * require flag has no effect when processing is off. If processing throws (the store is down), the
 * original findings come back with `failed` set, for the caller to record `evidence_artifacts_failed`.
 */
import type { Logger } from 'pino';
import type { CommandResult, ValidationArtifact, ValidationOutcome } from '../validation/types.js';
import { claimsExecution } from './claims.js';
import type { ArtifactStorage } from './storage.js';

export interface EvidenceArtifact {
  id: string;
  /** Where the store keeps it (with an S3 prefix, the full object key). */
  key: string;
  /** A link to it, or null when the store gives none (the body then shows the key). */
  url: string | null;
  kind: ValidationArtifact['kind'];
}

/** What processEvidence reads of a finding. */
export interface EvidenceFinding {
  severity: string;
  category: string;
  title: string;
  body: string;
  /** Set by the engine on a finding made from a failing command: that command, as the outcome names it. */
  validationCommand?: string;
}

export type EvidenceStatus = 'verified' | 'unverified';

export type WithEvidence<F> = F & {
  evidenceArtifacts?: EvidenceArtifact[];
  evidenceStatus?: EvidenceStatus;
  downgradedReason?: string;
};

export interface ProcessEvidenceInput<F extends EvidenceFinding> {
  /** VERDICT_EVIDENCE_ARTIFACTS. */
  enabled: boolean;
  /** VERDICT_EVIDENCE_REQUIRE_ARTIFACTS (no effect unless enabled). */
  requireArtifacts: boolean;
  /** null: VERDICT_EVIDENCE_STORE=none (nothing stored, `no_artifact_storage`). */
  storage: ArtifactStorage | null;
  /** The run the artifacts belong to: keys are `runs/<runId>/<artifact id>.log`. */
  runId: string;
  /** The validation outcome (null: validation did not run). */
  outcome: ValidationOutcome | null;
  findings: F[];
  log: Pick<Logger, 'info' | 'warn'>;
}

export interface ProcessEvidenceResult<F extends EvidenceFinding> {
  findings: Array<WithEvidence<F>>;
  /** Every artifact stored, the shadow executor's included. */
  artifacts: EvidenceArtifact[];
  /** The error message when processing threw (the findings are then the originals), else null. */
  failed: string | null;
}

export const ARTIFACT_CONTENT_TYPE = 'text/plain; charset=utf-8';

/** A finding's category that marks it as made from validation (review-engine 7.4). */
const VALIDATION_CATEGORY = 'validation';

/** A key segment: characters outside `A-Za-z0-9._-` become `_`, and `.` / `..` cannot come out. */
export function keySegment(value: string): string {
  const safe = value.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 200);
  if (safe === '') return '_';
  return /^\.+$/.test(safe) ? safe.replace(/\./g, '_') : safe;
}

/** One artifact of the outcome, with its command's result when the outcome has it. */
interface Source {
  artifact: ValidationArtifact;
  result: CommandResult | undefined;
  shadow: boolean;
}

/** The command result an artifact is the output of: the same position with the same command, else the first with that command. */
function resultOf(outcome: ValidationOutcome, index: number): CommandResult | undefined {
  const artifact = outcome.artifacts[index]!;
  const same = outcome.commands[index];
  if (same?.command === artifact.command) return same;
  return outcome.commands.find((c) => c.command === artifact.command);
}

function sources(outcome: ValidationOutcome | null): Source[] {
  if (outcome === null) return [];
  const of = (o: ValidationOutcome, shadow: boolean): Source[] =>
    o.artifacts.map((artifact, i) => ({ artifact, result: resultOf(o, i), shadow }));
  return [...of(outcome, false), ...(outcome.shadow ? of(outcome.shadow, true) : [])];
}

/** The stored text: a short header naming the command and how it ended, then its output. */
function artifactBody({ artifact, result, shadow }: Source): string {
  const header = [`$ ${artifact.command}`];
  if (shadow) header.push('# shadow validation: not evidence about the primary run');
  if (result) {
    const end = result.timedOut
      ? 'timed out'
      : result.signal
        ? `killed by ${result.signal}`
        : `exit code ${String(result.exitCode)}`;
    header.push(`# ${end} after ${result.durationMs} ms`);
    if (result.outputTruncated) {
      header.push(
        `# output truncated: the last ${Buffer.byteLength(artifact.content)} of ${result.outputBytes} bytes`,
      );
    }
  }
  return `${header.join('\n')}\n\n${artifact.content}`;
}

function failedCommand(result: CommandResult | undefined): boolean {
  return result !== undefined && (result.timedOut || result.signal !== null || result.exitCode !== 0);
}

const normalise = (command: string) => command.trim().replace(/\s+/g, ' ');

/** Words that name each check in a finding's prose (for claims that do not quote the command). */
const CHECK_WORDS: Record<CommandResult['check'], RegExp> = {
  test: /\b(?:tests?|test suite|specs?|jest|vitest|mocha|pytest|go test)\b/i,
  typecheck: /\b(?:type-?\s?check(?:s|ing|er)?|tsc|mypy|pyright|type errors?)\b/i,
  lint: /\b(?:lint(?:s|ing|er)?|eslint|ruff|flake8|golangci-lint)\b/i,
  build: /\b(?:builds?|building|compil(?:e|es|ed|ation|er))\b/i,
};

type Stored = Source & { evidence: EvidenceArtifact };

/** True when the finding is an execution claim (validation category, a validation command, or its prose). */
export function isExecutionClaim(finding: EvidenceFinding): boolean {
  return (
    finding.category.trim().toLowerCase() === VALIDATION_CATEGORY ||
    (finding.validationCommand ?? '').trim() !== '' ||
    claimsExecution(`${finding.title}\n${finding.body}`)
  );
}

/**
 * The primary run's artifacts that back a claim (a shadow's output is never evidence about the primary
 * run, review-engine 7.4), and when none does, why:
 * 1. a finding with `validationCommand`: that command's output, and nothing else;
 * 2. otherwise, the outputs of the commands its title or body quotes;
 * 3. otherwise, for a `validation` finding: the outputs of the commands that failed, else all of them;
 * 4. otherwise, the outputs of the checks its prose names (tests, lint, type check, build).
 */
function backing(finding: EvidenceFinding, stored: Stored[]): { artifacts: Stored[]; reason: string } {
  const primary = stored.filter((s) => !s.shadow);
  const cited = (finding.validationCommand ?? '').trim();
  if (cited !== '') {
    const artifacts = primary.filter((s) => normalise(s.artifact.command) === normalise(cited));
    return {
      artifacts,
      reason: `It cites the command \`${cited}\`, but this review stored no output of that command.`,
    };
  }
  if (primary.length === 0) {
    return {
      artifacts: [],
      reason:
        'It reports something as run or observed, but this review ran no command whose output could back it.',
    };
  }
  const text = `${finding.title}\n${finding.body}`;
  const lower = normalise(text).toLowerCase();
  const quoted = primary.filter((s) => lower.includes(normalise(s.artifact.command).toLowerCase()));
  if (quoted.length > 0) return { artifacts: quoted, reason: '' };
  if (finding.category.trim().toLowerCase() === VALIDATION_CATEGORY) {
    const failed = primary.filter((s) => failedCommand(s.result));
    return { artifacts: failed.length > 0 ? failed : primary, reason: '' };
  }
  const named = primary.filter((s) => s.result !== undefined && CHECK_WORDS[s.result.check].test(text));
  const ran = [...new Set(primary.map((s) => `\`${s.artifact.command}\``))].join(', ');
  return {
    artifacts: named,
    reason: `It reports something as run or observed, but none of the commands this review ran (${ran}) matches it.`,
  };
}

const NO_STORAGE_REASON =
  'It reports something as run or observed, but no artifact storage is configured (VERDICT_EVIDENCE_STORE=none), so no command output backs it.';

/**
 * Stores the outcome's command outputs and attaches them to the findings that are execution claims
 * (review-engine 2.6). Disabled: the findings come back unchanged, nothing is stored or logged.
 */
export async function processEvidence<F extends EvidenceFinding>(
  input: ProcessEvidenceInput<F>,
): Promise<ProcessEvidenceResult<F>> {
  const { findings, log, runId } = input;
  if (!input.enabled) return { findings, artifacts: [], failed: null };
  try {
    const all = sources(input.outcome);
    let stored: Stored[] = [];
    if (input.storage === null) {
      log.info(
        { event: 'no_artifact_storage', runId, outputs: all.length },
        'evidence artifacts are on but no artifact storage is configured: command outputs are not stored',
      );
    } else {
      const storage = input.storage;
      const keys = new Set<string>();
      const planned = all.map((source) => {
        const id = source.shadow ? `shadow-${source.artifact.id}` : source.artifact.id;
        const stem = `runs/${keySegment(runId)}/${keySegment(id)}`;
        let key = `${stem}.log`;
        for (let n = 2; keys.has(key); n++) key = `${stem}-${n}.log`;
        keys.add(key);
        return { source, id, key };
      });
      stored = await Promise.all(
        planned.map(async ({ source, id, key }) => {
          const put = await storage.put({
            key,
            body: artifactBody(source),
            contentType: ARTIFACT_CONTENT_TYPE,
          });
          return { ...source, evidence: { id, key: put.key, url: put.url, kind: source.artifact.kind } };
        }),
      );
      log.info(
        { event: 'evidence_artifacts_persisted', runId, count: stored.length, storage: storage.kind },
        `stored ${stored.length} evidence artifact(s) (${storage.kind})`,
      );
    }
    const out = findings.map((finding): WithEvidence<F> => {
      if (!isExecutionClaim(finding)) return finding;
      const { artifacts, reason } =
        input.storage === null ? { artifacts: [], reason: NO_STORAGE_REASON } : backing(finding, stored);
      if (artifacts.length > 0) {
        return {
          ...finding,
          evidenceArtifacts: artifacts.map((a) => a.evidence),
          ...(input.requireArtifacts ? { evidenceStatus: 'verified' as const } : {}),
        };
      }
      if (!input.requireArtifacts) return finding;
      return { ...finding, evidenceStatus: 'unverified', downgradedReason: reason };
    });
    return { findings: out, artifacts: stored.map((s) => s.evidence), failed: null };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    log.warn(
      { event: 'evidence_artifacts_failed', runId, err: error },
      `evidence artifacts failed, the findings are kept as they were: ${message}`,
    );
    return { findings, artifacts: [], failed: message };
  }
}
