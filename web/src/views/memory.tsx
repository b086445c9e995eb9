import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { apiGet } from '../api';
import { Badge, Empty, formatDuration, formatTime, Show, TableHead, useAsync, usd } from '../components';
import { Clusters } from './memory-clusters';
import { Contexts } from './memory-contexts';
import { Knowledge } from './memory-knowledge';
import { Preview } from './memory-preview';
import { RepoSuggestions } from './memory-shared';

const SECTIONS = [
  ['memory-contexts', 'Contexts'],
  ['memory-clusters', 'Clusters'],
  ['memory-knowledge', 'Knowledge'],
  ['memory-preview', 'Preview'],
  ['test-lab', 'Test Lab'],
] as const;

type LabSummary = {
  kind: 'corpus' | 'harness';
  id: string;
  name: string;
  createdAt: number;
  actor: string;
  provider?: string;
  model?: string;
  promptVersion?: string;
  commit?: string | null;
  scores?: Record<string, unknown>;
  caseCount?: number;
  reviewKey?: string;
  repo?: string;
  prNumber?: number;
  record?: Record<string, unknown>;
};
type LabCase = {
  name?: string;
  language?: string;
  kind?: string;
  clean?: boolean;
  status?: string;
  error?: string | null;
  falseFindings?: number;
  bugs?: { id?: string; caughtBy?: string | null; finding?: number | null; [k: string]: unknown }[];
  findings?: {
    severity?: string;
    title?: string;
    path?: string | null;
    line?: number | null;
    caught?: string | null;
  }[];
  tokens?: { input: number; output: number };
  costUsd?: number | null;
  wallMs?: number;
  /** Replay skipped it (a live-only real pull request): why. */
  skipped?: string;
  /** A real pull request: ReviewBench's scores of its review. */
  reviewBench?: {
    goldenTp: number;
    coveredTp: number;
    matched: number;
    matchedFp: number;
    unmatched: number;
  };
  /** A live run: each sample of the case, with its model calls and their prompt hashes. */
  samples?: { sample: number; caught?: string[]; falseFindings?: number; calls?: { promptHash: string }[] }[];
};

/** What a corpus run was (mode, samples), its real pull requests' scores and the cases it skipped. */
function runNotes(scores: Record<string, unknown> | undefined): string {
  if (!scores) return '';
  const out: string[] = [];
  if (typeof scores.mode === 'string') {
    const samples =
      typeof scores.samples === 'number' && scores.samples > 1 ? `, ${scores.samples} samples` : '';
    out.push(`${scores.mode}${samples}`);
  }
  const rb = scores.reviewBench as
    { groundedRecall?: unknown; groundedPrecision?: unknown } | null | undefined;
  if (rb)
    out.push(`real PRs: grounded recall ${pct(rb.groundedRecall)}, precision ${pct(rb.groundedPrecision)}`);
  if (typeof scores.skippedCases === 'number' && scores.skippedCases > 0)
    out.push(`${scores.skippedCases} skipped`);
  return out.map((x) => ` · ${x}`).join('');
}

const SCORE_KEYS = [
  'recall',
  'precision',
  'falseFindingsPerCleanCase',
  'severityAgreement',
  'anchorAccuracy',
] as const;

function pct(v: unknown): string {
  if (typeof v !== 'number') return 'n/a';
  return `${Math.round(v * 1000) / 10}%`;
}
function scoreText(key: string, v: unknown): string {
  if (key === 'falseFindingsPerCleanCase') return typeof v === 'number' ? v.toFixed(2) : 'n/a';
  return pct(v);
}

/**
 * Memory (contexts, clusters, knowledge documents, integrations and the preview, all editable where the
 * operator API lets them be) and the Test Lab runs with their per-case detail.
 */
export function Memory() {
  const [lab, reloadLab] = useAsync((signal) => apiGet<{ runs: LabSummary[] }>('test-lab', {}, signal), []);
  const [open, setOpen] = useState<string | null>(null);

  return (
    <section>
      <h1>Memory &amp; Test Lab</h1>
      <nav class="jump" aria-label="Sections">
        {SECTIONS.map(([id, label]) => (
          <button
            key={id}
            type="button"
            class="link"
            onClick={() => document.getElementById(id)?.scrollIntoView({ block: 'start' })}
          >
            {label}
          </button>
        ))}
      </nav>
      <RepoSuggestions />
      <Contexts />
      <Clusters />
      <Knowledge />
      <Preview />

      <div class="panel" id="test-lab">
        <h2>Test Lab</h2>
        <Show value={lab} what="Test Lab runs" retry={reloadLab}>
          {({ runs }) =>
            runs.length === 0 ? (
              <Empty>
                No Test Lab run yet. Run <code>npm run testlab</code> or save a run with{' '}
                <code>verdict harness</code>.
              </Empty>
            ) : (
              <div class="table-wrap">
                <table class="lab">
                  <TableHead
                    cols={[
                      'Run',
                      'Model',
                      ...SCORE_KEYS.map((k) =>
                        k === 'falseFindingsPerCleanCase'
                          ? 'false / clean case'
                          : k.replace(/([A-Z])/g, ' $1').toLowerCase(),
                      ),
                      'Cost',
                      'When',
                    ]}
                  />
                  <tbody>
                    {runs.map((r) => (
                      <Fragment key={r.id}>
                        <tr>
                          <th scope="row">
                            <button
                              type="button"
                              class="link"
                              aria-expanded={open === r.id}
                              onClick={() => setOpen(open === r.id ? null : r.id)}
                            >
                              {open === r.id ? '▾' : '▸'} {r.name}
                            </button>
                            <div class="muted small">
                              {r.kind}
                              {r.kind === 'corpus'
                                ? ` · ${r.caseCount ?? '?'} cases${runNotes(r.scores)}`
                                : ` · ${r.repo}#${r.prNumber}`}
                            </div>
                          </th>
                          <td>{r.kind === 'corpus' ? `${r.provider}/${r.model}` : '—'}</td>
                          {SCORE_KEYS.map((k) => (
                            <td key={k}>{r.kind === 'corpus' ? scoreText(k, r.scores?.[k]) : '—'}</td>
                          ))}
                          <td>
                            {r.kind === 'corpus' ? usd(r.scores?.costUsd as number | null | undefined) : '—'}
                          </td>
                          <td>{formatTime(r.createdAt)}</td>
                        </tr>
                        {open === r.id && (
                          <tr key={`${r.id}-detail`} class="detail-row">
                            <td colSpan={4 + SCORE_KEYS.length}>
                              <LabDetail id={r.id} />
                            </td>
                          </tr>
                        )}
                      </Fragment>
                    ))}
                  </tbody>
                </table>
              </div>
            )
          }
        </Show>
      </div>
    </section>
  );
}

function LabDetail({ id }: { id: string }) {
  const [value, reload] = useAsync(
    (signal) =>
      apiGet<{ run: LabSummary & { cases?: LabCase[] } }>(`test-lab/${encodeURIComponent(id)}`, {}, signal),
    [id],
  );
  return (
    <Show value={value} what="the run's cases" retry={reload}>
      {({ run }) => {
        if (run.kind === 'harness') {
          return (
            <div>
              <p>
                Review <code>{run.reviewKey}</code> saved by {run.actor}.
              </p>
              <pre class="code">{JSON.stringify(run.record, null, 2)}</pre>
            </div>
          );
        }
        const cases = run.cases ?? [];
        return (
          <div>
            <p class="small">
              Prompt {run.promptVersion}
              {run.commit ? ` · commit ${run.commit.slice(0, 12)}` : ''} · by {run.actor}
            </p>
            {cases.length === 0 ? (
              <Empty>This run recorded no case.</Empty>
            ) : (
              <ul class="plain cases">
                {cases.map((c, i) => {
                  const caught = (c.bugs ?? []).filter(
                    (b) => b.finding !== null && b.finding !== undefined,
                  ).length;
                  return (
                    <li key={i} class="case">
                      <strong>{c.name}</strong>{' '}
                      <span class="muted small">
                        {c.language} · {c.kind}
                        {c.clean ? ' · clean' : ''}
                      </span>{' '}
                      <Badge value={c.status} />
                      <div class="small">
                        {c.skipped
                          ? `skipped: ${c.skipped}`
                          : c.reviewBench
                            ? `golden findings covered ${c.reviewBench.coveredTp}/${c.reviewBench.goldenTp} · matched ${c.reviewBench.matched} (${c.reviewBench.matchedFp} on fp golden findings) · unmatched ${c.reviewBench.unmatched}`
                            : `bugs caught ${caught}/${(c.bugs ?? []).length} · false findings ${c.falseFindings ?? 0}`}{' '}
                        · tokens {c.tokens?.input ?? '?'} / {c.tokens?.output ?? '?'} · {usd(c.costUsd)} ·{' '}
                        {formatDuration(c.wallMs)}
                        {(c.samples ?? []).length > 1 ? ` · ${c.samples!.length} samples` : ''}
                        {(c.samples ?? []).some((x) => (x.calls ?? []).length > 0)
                          ? ` · ${(c.samples ?? []).reduce((n, x) => n + (x.calls ?? []).length, 0)} model calls recorded with their prompt hashes`
                          : ''}
                      </div>
                      {c.error && <p class="small error-text">{c.error}</p>}
                      {(c.findings ?? []).length > 0 && (
                        <ul class="small">
                          {c.findings!.map((f, j) => (
                            <li key={j}>
                              <Badge value={f.severity} /> {f.title}{' '}
                              <code>
                                {f.path ?? ''}
                                {f.line != null ? `:${f.line}` : ''}
                              </code>{' '}
                              {f.caught ? (
                                <span class="badge badge-succeeded">caught {f.caught}</span>
                              ) : (
                                <span class="muted">
                                  {c.reviewBench ? 'no golden finding' : 'no planted bug'}
                                </span>
                              )}
                            </li>
                          ))}
                        </ul>
                      )}
                    </li>
                  );
                })}
              </ul>
            )}
          </div>
        );
      }}
    </Show>
  );
}
