import { useEffect, useState } from 'preact/hooks';
import { ApiError, apiGet, apiSend, describeError } from '../api';
import {
  Badge,
  ConfirmDialog,
  count,
  Empty,
  ErrorState,
  formatDuration,
  formatTime,
  Loading,
  Show,
  TableHead,
  useAsync,
  usd,
} from '../components';
import { BASE } from '../router';
import type { PullRequestItem } from './pull-requests';

type Run = {
  id: string;
  reviewKey: string;
  headSha: string | null;
  variant: string | null;
  trigger: string;
  status: string;
  analysisStatus: string;
  publishStatus: string;
  reason: string | null;
  error: string | null;
  publishError: string | null;
  verdict: string | null;
  confidence: number | null;
  checkRunId: string | null;
  createdAt: number;
  updatedAt: number;
  /** The stored analysis; only its validation report is read here (docs/validation.md). */
  result?: { validation?: RunValidation } | null;
};
type RunValidation = {
  status: string;
  executor: string | null;
  evidence: string;
  commands: Array<{ command: string; passed: boolean; introduced: boolean | null }>;
  notRun: string[];
};
type Finding = {
  id: number;
  runId: string;
  severity: string;
  category: string;
  path: string | null;
  line: number | null;
  endLine: number | null;
  lineText: string | null;
  suggestion: string | null;
  title: string;
  body: string;
  outsideDiff: boolean;
  stillOpen: boolean;
};
type Publication = {
  id: number;
  runId: string | null;
  kind: string;
  mode: string;
  status: string;
  receipt: string | null;
  error: string | null;
  createdAt: number;
};
type PrEvent = {
  type: 'webhook' | 'command' | 'run';
  at: number;
  [k: string]: unknown;
};
type Detail = {
  generatedAt: string;
  data: {
    pullRequest: Omit<PullRequestItem, 'updatedAt' | 'latestRun'> | null;
    runs: Run[];
    findings: Finding[];
    events: PrEvent[];
    publications: Publication[];
  };
};
type TraceSummary = {
  traceId: string;
  runId: string | null;
  name: string;
  status: string;
  startedAt: string;
  durationMs: number | null;
};
type Span = {
  spanId: string;
  parentSpanId: string | null;
  kind: string;
  name: string;
  status: string;
  provider: string | null;
  model: string | null;
  inputTokens: number | null;
  outputTokens: number | null;
  costUsd: number | null;
  startedAt: string;
  endedAt: string | null;
  durationMs: number | null;
};
export type Command = {
  id: string;
  kind: string;
  status: string;
  error: string | null;
  result: unknown;
  createdAt: number;
  updatedAt?: number;
};

/** A link to what a ledger entry posted on GitHub, when its receipt says where. */
function githubLink(repo: string, number: number, p: Publication): string | null {
  const pr = `https://github.com/${repo}/pull/${number}`;
  if (p.status !== 'published') return null;
  switch (p.kind) {
    case 'review':
      return p.receipt ? `${pr}#pullrequestreview-${p.receipt}` : pr;
    case 'comment':
    case 'reply':
      return p.receipt ? `${pr}#issuecomment-${p.receipt}` : pr;
    case 'thread_reply':
      return p.receipt ? `${pr}#discussion_r${p.receipt}` : pr;
    case 'check_run':
      return p.receipt ? `https://github.com/${repo}/runs/${p.receipt}` : `${pr}/checks`;
    default:
      return pr;
  }
}

/** One pull request: runs, findings, events, the publication ledger, traces and operator actions. */
export function PullRequestPage({ repo, number }: { repo: string; number: number }) {
  const [detail, reload] = useAsync(
    (signal) => apiGet<Detail>('pr', { repo, number }, signal),
    [repo, number],
  );
  const [traces] = useAsync(
    (signal) => apiGet<{ traces: TraceSummary[] }>('traces', { repo, prNumber: number, limit: 100 }, signal),
    [repo, number],
  );
  const [action, setAction] = useState<{ kind: 'requeue' | 'retry-publish'; run: Run } | null>(null);
  const [commands, setCommands] = useState<{ label: string; command?: Command; error?: unknown }[]>([]);

  const confirm = async () => {
    if (!action) return;
    const { kind, run } = action;
    setAction(null);
    const label = `${kind === 'requeue' ? 'Requeue' : 'Retry publication of'} ${run.reviewKey}`;
    try {
      const body =
        kind === 'requeue'
          ? { reviewKey: run.reviewKey, variant: `operator-${Date.now()}`, reason: 'dashboard' }
          : { reviewKey: run.reviewKey, reason: 'dashboard' };
      const out = await apiSend<{ created: boolean; command: Command }>('POST', `commands/${kind}`, body);
      setCommands((c) => [{ label, command: out.command }, ...c]);
    } catch (error) {
      setCommands((c) => [{ label, error }, ...c]);
    }
  };

  return (
    <section>
      <p class="crumbs">
        <a href={`${BASE}/pull-requests`}>Pull requests</a> / {repo}#{number}
      </p>
      <Show value={detail} what="the pull request" retry={reload}>
        {(d) => {
          const pr = d.data.pullRequest;
          return (
            <>
              <div class="heading-row">
                <h1>
                  {pr?.title ?? '(no title)'} <span class="muted">#{number}</span>
                </h1>
                <div class="row-actions">
                  <a
                    class="button secondary small"
                    href={`https://github.com/${repo}/pull/${number}`}
                    rel="noreferrer"
                    target="_blank"
                  >
                    On GitHub
                  </a>
                  <button type="button" class="secondary small" onClick={reload}>
                    Refresh
                  </button>
                </div>
              </div>
              <p class="muted">
                {repo} · by {pr?.author ?? 'unknown'} · into {pr?.baseRef ?? '?'} · head{' '}
                <code>{pr?.headSha?.slice(0, 12) ?? '—'}</code>
                {pr?.draft ? ' · draft' : ''}
              </p>
              {commands.length > 0 && (
                <div class="panel" aria-live="polite">
                  <h2>Operator commands</h2>
                  <ul class="plain">
                    {commands.map((c, i) => (
                      <li key={i}>
                        {c.label}:{' '}
                        {c.command ? <CommandStatus initial={c.command} /> : <ErrorState error={c.error} />}
                      </li>
                    ))}
                  </ul>
                </div>
              )}
              <h2>Runs</h2>
              {d.data.runs.length === 0 ? (
                <Empty>No review run yet.</Empty>
              ) : (
                <div class="runs">
                  {d.data.runs.map((run) => (
                    <RunCard
                      key={run.id}
                      run={run}
                      traces={
                        traces.state === 'ready' ? traces.data.traces.filter((t) => t.runId === run.id) : null
                      }
                      tracesError={traces.state === 'error' ? traces.error : null}
                      findings={d.data.findings.filter((f) => f.runId === run.id)}
                      onAction={(kind) => setAction({ kind, run })}
                    />
                  ))}
                </div>
              )}
              <h2>Publication ledger</h2>
              <Ledger repo={repo} number={number} publications={d.data.publications} runs={d.data.runs} />
              <h2>Events</h2>
              <Events events={d.data.events} />
              <p class="muted small">Generated {formatTime(d.generatedAt)}.</p>
            </>
          );
        }}
      </Show>
      {action && (
        <ConfirmDialog
          title={action.kind === 'requeue' ? 'Requeue this review?' : 'Retry publication?'}
          confirmLabel={action.kind === 'requeue' ? 'Requeue' : 'Retry publication'}
          onConfirm={confirm}
          onCancel={() => setAction(null)}
        >
          <p>
            {action.kind === 'requeue'
              ? 'A new review of this head is queued as an operator command; the command bridge carries it out.'
              : 'The stored analysis is published again as an operator command; nothing is reviewed again.'}
          </p>
          <p>
            <code>{action.run.reviewKey}</code>
          </p>
        </ConfirmDialog>
      )}
    </section>
  );
}

/** A command's status, polled until it succeeds or fails. */
export function CommandStatus({ initial }: { initial: Command }) {
  const [command, setCommand] = useState(initial);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    if (command.status === 'succeeded' || command.status === 'failed') return;
    let delay = 1000;
    let timer: ReturnType<typeof setTimeout>;
    let stopped = false;
    const poll = async () => {
      try {
        const out = await apiGet<{ command: Command }>(`commands/${encodeURIComponent(command.id)}`);
        if (stopped) return;
        setCommand(out.command);
        setError(null);
        if (out.command.status === 'succeeded' || out.command.status === 'failed') return;
      } catch (err) {
        if (stopped) return;
        setError(err);
        if (err instanceof ApiError && err.status === 404) return;
      }
      delay = Math.min(delay * 1.5, 10000);
      timer = setTimeout(poll, delay);
    };
    timer = setTimeout(poll, delay);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [command.id]);
  return (
    <span class="command-status" data-command-id={command.id}>
      command <code>{command.id}</code> <Badge value={command.status} />
      {(command.status === 'queued' || command.status === 'running') && (
        <span class="muted small"> (checking…)</span>
      )}
      {command.error && <span class="error-text"> {command.error}</span>}
      {error != null && <span class="error-text"> {describeError(error)}</span>}
    </span>
  );
}

function RunCard({
  run,
  traces,
  tracesError,
  findings,
  onAction,
}: {
  run: Run;
  traces: TraceSummary[] | null;
  tracesError: unknown;
  findings: Finding[];
  onAction: (kind: 'requeue' | 'retry-publish') => void;
}) {
  const canRetryPublish =
    ['analysed', 'degraded'].includes(run.analysisStatus) && run.publishStatus !== 'published';
  return (
    <article class="run" aria-labelledby={`run-${run.id}`}>
      <header class="run-head">
        <h3 id={`run-${run.id}`}>
          <code>{run.reviewKey}</code>
        </h3>
        <span class="muted small">
          {run.trigger} · {formatTime(run.createdAt)}
        </span>
      </header>
      <div class="side-by-side">
        <div>
          <h4>Run</h4>
          <Badge value={run.status} />
          {run.reason && <p class="small">{run.reason}</p>}
          {run.error && <p class="small error-text">{run.error}</p>}
        </div>
        <div>
          <h4>Analysis</h4>
          <Badge value={run.analysisStatus} />
          {run.verdict && (
            <p class="small">
              {run.verdict}
              {run.confidence !== null && ` · confidence ${run.confidence}/5`}
            </p>
          )}
        </div>
        {run.result?.validation && (
          <div>
            <h4>Validation</h4>
            <Badge value={run.result.validation.status} />
            <p class="small">{run.result.validation.evidence}</p>
            {run.result.validation.commands
              .filter((c) => !c.passed)
              .map((c) => (
                <p class="small error-text" key={c.command}>
                  {c.command}
                  {c.introduced === true ? ' · introduced by this pull request' : ''}
                </p>
              ))}
            {run.result.validation.notRun.map((n) => (
              <p class="small muted" key={n}>
                not run: {n}
              </p>
            ))}
          </div>
        )}
        <div>
          <h4>Publication</h4>
          <Badge value={run.publishStatus} />
          {run.publishError && <p class="small error-text">{run.publishError}</p>}
        </div>
      </div>
      <div class="row-actions">
        <button type="button" onClick={() => onAction('requeue')}>
          Requeue…
        </button>
        <button
          type="button"
          class="secondary"
          onClick={() => onAction('retry-publish')}
          disabled={!canRetryPublish}
          title={
            canRetryPublish ? undefined : 'Only an analysed run that is not published can be published again'
          }
        >
          Retry publish…
        </button>
      </div>
      <details class="findings" open={findings.length > 0 && findings.length <= 10}>
        <summary>Findings ({findings.length})</summary>
        {findings.length === 0 ? (
          <Empty>No finding recorded for this run.</Empty>
        ) : (
          <ul class="plain">
            {findings.map((f) => (
              <li key={f.id} class="finding">
                <Badge value={f.severity} /> <strong>{f.title}</strong>{' '}
                <span class="muted small">{f.category}</span>
                {f.stillOpen && <span class="badge">still open</span>}
                <div class="small">
                  <code>
                    {f.path ?? '(no file)'}
                    {f.line !== null
                      ? `:${f.line}${f.endLine && f.endLine !== f.line ? `-${f.endLine}` : ''}`
                      : ' (no line)'}
                  </code>
                  {f.outsideDiff && <span class="muted"> outside the diff</span>}
                </div>
                {f.lineText && <pre class="code">{f.lineText}</pre>}
                <p class="small">{f.body}</p>
                {f.suggestion && (
                  <details>
                    <summary>Suggested change</summary>
                    <pre class="code">{f.suggestion}</pre>
                  </details>
                )}
              </li>
            ))}
          </ul>
        )}
      </details>
      <div class="traces">
        <h4>Traces</h4>
        {tracesError ? (
          <ErrorState error={tracesError} />
        ) : traces === null ? (
          <Loading what="traces" />
        ) : traces.length === 0 ? (
          <Empty>No trace recorded for this run.</Empty>
        ) : (
          traces.map((t) => <TraceView key={t.traceId} trace={t} />)
        )}
      </div>
    </article>
  );
}

function TraceView({ trace }: { trace: TraceSummary }) {
  const [open, setOpen] = useState(false);
  return (
    <div class="trace">
      <button type="button" class="link" aria-expanded={open} onClick={() => setOpen(!open)}>
        {open ? '▾' : '▸'} Trace {trace.name} <Badge value={trace.status} />{' '}
        {formatDuration(trace.durationMs)}
      </button>
      {open && <Waterfall traceId={trace.traceId} />}
    </div>
  );
}

/** The spans of a trace as a waterfall: one bar per span on the trace's time line, with tokens and cost. */
function Waterfall({ traceId }: { traceId: string }) {
  const [value, reload] = useAsync(
    (signal) =>
      apiGet<{ trace: TraceSummary & { endedAt: string | null }; spans: Span[] }>(
        `traces/${encodeURIComponent(traceId)}`,
        {},
        signal,
      ),
    [traceId],
  );
  return (
    <Show value={value} what="the trace" retry={reload}>
      {({ trace, spans }) => {
        if (spans.length === 0) return <Empty>This trace has no spans.</Empty>;
        const t0 = Date.parse(trace.startedAt);
        const ends = spans.map((s) =>
          s.endedAt ? Date.parse(s.endedAt) : Date.parse(s.startedAt) + (s.durationMs ?? 0),
        );
        const end = Math.max(trace.endedAt ? Date.parse(trace.endedAt) : 0, ...ends, t0 + 1);
        const total = end - t0;
        const depth = new Map<string, number>();
        const byId = new Map(spans.map((s) => [s.spanId, s]));
        const depthOf = (s: Span, seen = 0): number => {
          if (depth.has(s.spanId)) return depth.get(s.spanId)!;
          const parent = s.parentSpanId ? byId.get(s.parentSpanId) : undefined;
          const d = parent && seen < 50 ? depthOf(parent, seen + 1) + 1 : 0;
          depth.set(s.spanId, d);
          return d;
        };
        const ordered = [...spans].sort((a, b) => Date.parse(a.startedAt) - Date.parse(b.startedAt));
        const sum = (k: 'inputTokens' | 'outputTokens' | 'costUsd') =>
          spans.some((s) => s.kind === 'model' && s[k] === null)
            ? null
            : spans.reduce((acc, s) => acc + (s[k] ?? 0), 0);
        return (
          <div class="waterfall-wrap">
            <table class="waterfall" aria-label={`Spans of trace ${traceId}`}>
              <thead>
                <tr>
                  <th scope="col">Span</th>
                  <th scope="col" class="wf-bar-col">
                    Timeline ({formatDuration(total)})
                  </th>
                  <th scope="col">Duration</th>
                  <th scope="col">Tokens in / out</th>
                  <th scope="col">Cost</th>
                </tr>
              </thead>
              <tbody>
                {ordered.map((s, i) => {
                  const start = Date.parse(s.startedAt) - t0;
                  const dur = ends[spans.indexOf(s)]! - Date.parse(s.startedAt);
                  const left = (Math.max(0, start) / total) * 100;
                  const width = Math.max(0.5, (Math.max(0, dur) / total) * 100);
                  return (
                    <tr key={s.spanId + i} class={s.status === 'error' ? 'span-error' : undefined}>
                      <th scope="row" style={{ paddingLeft: `${0.5 + depthOf(s) * 1}rem` }}>
                        <span class={`kind kind-${s.kind}`}>{s.kind}</span> {s.name}
                        {s.model && (
                          <span class="muted small">
                            {' '}
                            {s.provider ? `${s.provider}/` : ''}
                            {s.model}
                          </span>
                        )}
                      </th>
                      <td class="wf-bar-col">
                        <div class="wf-track">
                          <div
                            class={`wf-bar kind-${s.kind}`}
                            style={{ left: `${left}%`, width: `${Math.min(width, 100 - left)}%` }}
                          />
                        </div>
                      </td>
                      <td>{formatDuration(s.durationMs ?? dur)}</td>
                      <td>
                        {s.inputTokens === null && s.outputTokens === null
                          ? '—'
                          : `${count(s.inputTokens)} / ${count(s.outputTokens)}`}
                      </td>
                      <td>{s.costUsd === null ? '—' : usd(s.costUsd)}</td>
                    </tr>
                  );
                })}
              </tbody>
              <tfoot>
                <tr>
                  <th scope="row">Total ({spans.length} spans)</th>
                  <td class="wf-bar-col" />
                  <td>{formatDuration(total)}</td>
                  <td>
                    {count(sum('inputTokens'))} / {count(sum('outputTokens'))}
                  </td>
                  <td>{usd(sum('costUsd'))}</td>
                </tr>
              </tfoot>
            </table>
          </div>
        );
      }}
    </Show>
  );
}

function Ledger({
  repo,
  number,
  publications,
  runs,
}: {
  repo: string;
  number: number;
  publications: Publication[];
  runs: Run[];
}) {
  if (publications.length === 0) return <Empty>Nothing has been published for this pull request.</Empty>;
  const keyOf = new Map(runs.map((r) => [r.id, r.reviewKey]));
  return (
    <div class="table-wrap">
      <table>
        <TableHead cols={['When', 'What', 'Mode', 'Status', 'On GitHub']} />
        <tbody>
          {publications.map((p) => {
            const link = githubLink(repo, number, p);
            return (
              <tr key={p.id}>
                <td data-label="When">{formatTime(p.createdAt)}</td>
                <td data-label="What">
                  {p.kind}
                  {p.runId && <div class="muted small">{keyOf.get(p.runId) ?? p.runId}</div>}
                </td>
                <td data-label="Mode">{p.mode}</td>
                <td data-label="Status">
                  <Badge value={p.status} />
                  {p.error && <div class="small error-text">{p.error}</div>}
                </td>
                <td data-label="On GitHub">
                  {link ? (
                    <a href={link} rel="noreferrer" target="_blank">
                      {p.receipt ? `${p.kind} ${p.receipt}` : 'open'}
                    </a>
                  ) : (
                    <span class="muted">{p.mode === 'shadow' ? 'not posted (shadow)' : 'not posted'}</span>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

function Events({ events }: { events: PrEvent[] }) {
  if (events.length === 0) return <Empty>No event recorded.</Empty>;
  return (
    <ol class="events">
      {events.map((e, i) => (
        <li key={i}>
          <span class="muted small">{formatTime(e.at)}</span> <span class="badge">{e.type}</span>{' '}
          {e.type === 'webhook' && (
            <>
              {String(e.event)}
              {e.action ? `.${String(e.action)}` : ''} <Badge value={String(e.status)} />
              {e.outcome ? <span class="muted small"> {String(e.outcome)}</span> : null}
            </>
          )}
          {e.type === 'command' && (
            <>
              {String(e.kind)} by {String(e.actor)} <Badge value={String(e.status)} />
            </>
          )}
          {e.type === 'run' && (
            <>
              run {String(e.trigger)} <Badge value={String(e.status)} />
            </>
          )}
        </li>
      ))}
    </ol>
  );
}
