import { apiGet, apiSend, describeError } from '../api';
import { ChartView, COLORS } from '../chart';
import { useState } from 'preact/hooks';
import {
  Badge,
  count,
  Empty,
  formatDuration,
  formatTime,
  Show,
  TableHead,
  useAsync,
  usd,
} from '../components';

type Lane = {
  queue: string;
  waiting: number;
  running: number;
  done: number;
  dead: number;
  oldestWaitingAgeMs: number | null;
};
/** What reviewers did with Verdict's line comments (NAMES.md "Memory": analytics `feedback`). */
type Feedback = {
  posted: number;
  addressed: number;
  dismissed: number;
  up: number;
  down: number;
  addressedRate: number;
};
type AnalyticsAnswer = {
  analytics: {
    feedback?: Feedback;
    repositories?: { repo: string; feedback: Feedback }[];
    generatedAt: string;
    queue: { lanes: Lane[] };
    deliveries: Record<string, number>;
    runs: Record<string, number>;
    commands: Record<string, number>;
    failureReasons: { source: string; reason: string; count: number }[];
    scheduler?: {
      jobs: {
        name: string;
        lastStatus: string | null;
        lastFinishedAt: number | string | null;
        lastError: string | null;
      }[];
      watchdog: { generatedAt: string | null; messages: string[] } | null;
    };
  };
};
type SeriesPoint = {
  bucket: string;
  reviews: number;
  runs: number;
  findings: number;
  bySeverity: Record<string, number>;
};
type Report = { series: SeriesPoint[]; notes?: { code: string; message: string }[] };
type Usage = { model: { costUsd: number | null; calls: number; complete: boolean } };

const DAY = 86_400_000;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const SEVERITY_COLORS: Record<string, string> = {
  P0: COLORS.red,
  P1: COLORS.orange,
  P2: COLORS.blue,
  P3: COLORS.teal,
  info: COLORS.grey,
  unknown: COLORS.purple,
};

/** Model spend per day of the current month: one usage report per day (operator-api 4.6 `settings/usage`). */
async function dailySpend(signal: AbortSignal) {
  const now = Date.now();
  const today = Date.parse(`${day(now)}T00:00:00Z`);
  const monthStart = Date.parse(`${day(now).slice(0, 8)}01T00:00:00Z`);
  const days: number[] = [];
  for (let d = monthStart; d <= today; d += DAY) days.push(d);
  const out: { day: string; costUsd: number | null; calls: number }[] = new Array(days.length);
  let next = 0;
  const worker = async () => {
    while (next < days.length) {
      const i = next++;
      const d = day(days[i]!);
      const u = await apiGet<Usage>('settings/usage', { from: d, to: d }, signal);
      out[i] = { day: d, costUsd: u.model.costUsd, calls: u.model.calls };
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  const settings = await apiGet<{ settings: { monthlyModelBudgetUsd: number | null } }>(
    'settings',
    {},
    signal,
  ).catch(() => null);
  return { days: out, budget: settings ? settings.settings.monthlyModelBudgetUsd : undefined };
}

export function Analytics() {
  const [analytics, reloadAnalytics] = useAsync(
    (signal) => apiGet<AnalyticsAnswer>('analytics', {}, signal),
    [],
  );
  const [report, reloadReport] = useAsync(
    (signal) =>
      apiGet<Report>(
        'reports',
        { from: day(Date.now() - 29 * DAY), to: day(Date.now()), granularity: 'day' },
        signal,
      ),
    [],
  );
  const [spend, reloadSpend] = useAsync(dailySpend, []);

  return (
    <section>
      <div class="heading-row">
        <h1>Analytics</h1>
        <button
          type="button"
          class="secondary small"
          onClick={() => {
            reloadAnalytics();
            reloadReport();
            reloadSpend();
          }}
        >
          Refresh
        </button>
      </div>
      <div class="grid">
        <div class="panel">
          <h2>Queue</h2>
          <Show value={analytics} what="the queue" retry={reloadAnalytics}>
            {({ analytics: a }) =>
              a.queue.lanes.length === 0 ? (
                <Empty>No job has been queued yet.</Empty>
              ) : (
                <>
                  <div class="table-wrap">
                    <table>
                      <TableHead cols={['Lane', 'Waiting', 'Running', 'Done', 'Dead', 'Oldest waiting']} />
                      <tbody>
                        {a.queue.lanes.map((l) => (
                          <tr key={l.queue}>
                            <th scope="row">{l.queue}</th>
                            <td>{l.waiting}</td>
                            <td>{l.running}</td>
                            <td>{l.done}</td>
                            <td class={l.dead > 0 ? 'error-text' : undefined}>{l.dead}</td>
                            <td>
                              {l.oldestWaitingAgeMs === null ? '—' : formatDuration(l.oldestWaitingAgeMs)}
                            </td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  </div>
                  <ChartView
                    id="queue"
                    label="Jobs per queue lane by status"
                    config={{
                      type: 'bar',
                      data: {
                        labels: a.queue.lanes.map((l) => l.queue),
                        datasets: [
                          {
                            label: 'waiting',
                            data: a.queue.lanes.map((l) => l.waiting),
                            backgroundColor: COLORS.orange,
                          },
                          {
                            label: 'running',
                            data: a.queue.lanes.map((l) => l.running),
                            backgroundColor: COLORS.blue,
                          },
                          {
                            label: 'dead',
                            data: a.queue.lanes.map((l) => l.dead),
                            backgroundColor: COLORS.red,
                          },
                        ],
                      },
                      options: { scales: { y: { beginAtZero: true, ticks: { precision: 0 } } } },
                    }}
                    table={{
                      head: ['Lane', 'Waiting', 'Running', 'Done', 'Dead'],
                      rows: a.queue.lanes.map((l) => [l.queue, l.waiting, l.running, l.done, l.dead]),
                    }}
                  />
                </>
              )
            }
          </Show>
        </div>
        <div class="panel">
          <h2>Status counts</h2>
          <Show value={analytics} what="status counts" retry={reloadAnalytics}>
            {({ analytics: a }) => (
              <dl class="counts">
                {(['runs', 'deliveries', 'commands'] as const).map((k) => (
                  <div key={k}>
                    <dt>{k}</dt>
                    <dd>
                      {Object.keys(a[k]).length === 0
                        ? 'none yet'
                        : Object.entries(a[k])
                            .map(([s, n]) => `${s} ${n}`)
                            .join(' · ')}
                    </dd>
                  </div>
                ))}
              </dl>
            )}
          </Show>
        </div>
      </div>

      <div class="panel">
        <h2>Feedback on line comments</h2>
        <Show value={analytics} what="feedback" retry={reloadAnalytics}>
          {({ analytics: a }) => <FeedbackTable total={a.feedback} repositories={a.repositories ?? []} />}
        </Show>
      </div>

      <div class="panel">
        <h2>Failure reasons</h2>
        <Show value={analytics} what="failure reasons" retry={reloadAnalytics}>
          {({ analytics: a }) =>
            a.failureReasons.length === 0 ? (
              <Empty>No failure recorded.</Empty>
            ) : (
              <div class="table-wrap">
                <table>
                  <TableHead cols={['Source', 'Reason', 'Count']} />
                  <tbody>
                    {a.failureReasons.map((f, i) => (
                      <tr key={i}>
                        <td>{f.source}</td>
                        <td class="wrap">{f.reason}</td>
                        <td>{f.count}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )
          }
        </Show>
      </div>

      <div class="grid">
        <div class="panel">
          <h2>Reviews per day (30 days)</h2>
          <Show value={report} what="the report" retry={reloadReport}>
            {(r) =>
              r.series.length === 0 ? (
                <Empty>No review in the last 30 days.</Empty>
              ) : (
                <ChartView
                  id="reviews"
                  label="Reviews and runs per day over the last 30 days"
                  config={{
                    type: 'bar',
                    data: {
                      labels: r.series.map((p) => p.bucket),
                      datasets: [
                        {
                          label: 'reviews',
                          data: r.series.map((p) => p.reviews),
                          backgroundColor: COLORS.blue,
                        },
                        { label: 'runs', data: r.series.map((p) => p.runs), backgroundColor: COLORS.grey },
                      ],
                    },
                    options: { scales: { y: { beginAtZero: true, ticks: { precision: 0 } } } },
                  }}
                  table={{
                    head: ['Day', 'Reviews', 'Runs'],
                    rows: r.series.map((p) => [p.bucket, p.reviews, p.runs]),
                  }}
                />
              )
            }
          </Show>
        </div>
        <div class="panel">
          <h2>Findings by severity (30 days)</h2>
          <Show value={report} what="the report" retry={reloadReport}>
            {(r) => {
              const severities = Object.keys(r.series[0]?.bySeverity ?? {});
              return r.series.length === 0 ? (
                <Empty>No finding in the last 30 days.</Empty>
              ) : (
                <ChartView
                  id="severity"
                  label="Findings per day by severity over the last 30 days"
                  config={{
                    type: 'bar',
                    data: {
                      labels: r.series.map((p) => p.bucket),
                      datasets: severities.map((s) => ({
                        label: s,
                        data: r.series.map((p) => p.bySeverity[s] ?? 0),
                        backgroundColor: SEVERITY_COLORS[s] ?? COLORS.grey,
                      })),
                    },
                    options: {
                      scales: {
                        x: { stacked: true },
                        y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } },
                      },
                    },
                  }}
                  table={{
                    head: ['Day', ...severities],
                    rows: r.series.map((p) => [p.bucket, ...severities.map((s) => p.bySeverity[s] ?? 0)]),
                  }}
                />
              );
            }}
          </Show>
        </div>
      </div>

      <div class="panel">
        <h2>Model spend this month</h2>
        <Show value={spend} what="model usage" retry={reloadSpend}>
          {(data) => <SpendChart {...data} />}
        </Show>
      </div>

      <AlertsPanel />

      <Show value={analytics} what="the scheduler" retry={reloadAnalytics}>
        {({ analytics: a }) =>
          a.scheduler ? (
            <div class="panel">
              <h2>Scheduled jobs</h2>
              {a.scheduler.jobs.length === 0 ? (
                <Empty>No scheduled job has run (the scheduler may be off: VERDICT_SCHEDULER=0).</Empty>
              ) : (
                <ul class="plain">
                  {a.scheduler.jobs.map((j) => (
                    <li key={j.name}>
                      <strong>{j.name}</strong> {j.lastStatus ?? 'never ran'} · {formatTime(j.lastFinishedAt)}
                      {j.lastError && <span class="error-text"> {j.lastError}</span>}
                    </li>
                  ))}
                </ul>
              )}
              {a.scheduler.watchdog?.messages.map((m, i) => (
                <p key={i} class="note">
                  {m}
                </p>
              ))}
              <p class="muted small">Generated {formatTime(a.generatedAt)}.</p>
            </div>
          ) : null
        }
      </Show>
    </section>
  );
}

const rate = (f: Feedback) => (f.posted === 0 ? '—' : `${Math.round(f.addressedRate * 100)}%`);

/** Per repository: line comments posted, findings addressed and dismissed, thumbs up and down, the addressed rate. */
function FeedbackTable({
  total,
  repositories,
}: {
  total: Feedback | undefined;
  repositories: { repo: string; feedback: Feedback }[];
}) {
  if (!total || repositories.length === 0) {
    return <Empty>Verdict has not posted a line comment yet.</Empty>;
  }
  const cells = (f: Feedback) => (
    <>
      <td>{count(f.posted)}</td>
      <td>{count(f.addressed)}</td>
      <td>{count(f.dismissed)}</td>
      <td>{count(f.up)}</td>
      <td>{count(f.down)}</td>
      <td>{rate(f)}</td>
    </>
  );
  return (
    <>
      <div class="table-wrap">
        <table>
          <TableHead
            cols={[
              'Repository',
              'Posted',
              'Addressed',
              'Dismissed',
              'Thumbs up',
              'Thumbs down',
              'Addressed rate',
            ]}
          />
          <tbody>
            {repositories.map((r) => (
              <tr key={r.repo}>
                <th scope="row">{r.repo}</th>
                {cells(r.feedback)}
              </tr>
            ))}
          </tbody>
          {repositories.length > 1 && (
            <tfoot>
              <tr>
                <th scope="row">All repositories</th>
                {cells(total)}
              </tr>
            </tfoot>
          )}
        </table>
      </div>
      <p class="muted small">
        Addressed: the code fixed the finding (an accepted disposition, or its lines changed and its thread
        was resolved). Dismissed: a thumbs down, <code>@verdict ignore</code>, or a thread resolved with its
        lines unchanged. The addressed rate is addressed findings over posted line comments.
      </p>
    </>
  );
}

function SpendChart({
  days,
  budget,
}: {
  days: { day: string; costUsd: number | null; calls: number }[];
  budget: number | null | undefined;
}) {
  let running: number | null = 0;
  const cumulative = days.map((d) => {
    running = running === null || d.costUsd === null ? null : running + d.costUsd;
    return running;
  });
  const unknownDays = days.filter((d) => d.costUsd === null).length;
  const total = cumulative[cumulative.length - 1] ?? null;
  return (
    <>
      <p>
        Spent this month: <strong>{usd(total)}</strong>
        {budget === undefined
          ? ' · the monthly budget is not available to this session'
          : budget === null
            ? ' · no monthly budget is set'
            : ` of a ${usd(budget)} monthly budget${total !== null ? ` (${Math.round((total / budget) * 100)}%)` : ''}`}
        {' · '}
        {count(days.reduce((s, d) => s + d.calls, 0))} model calls
      </p>
      {unknownDays > 0 && (
        <p class="note">
          {unknownDays} day{unknownDays === 1 ? '' : 's'} had calls that did not report their cost: those days
          and the running total are unknown, not zero.
        </p>
      )}
      <ChartView
        id="spend"
        label="Model spend per day this month, with the running total against the monthly budget"
        config={{
          type: 'bar',
          data: {
            labels: days.map((d) => d.day),
            datasets: [
              {
                type: 'bar',
                label: 'spend per day (USD)',
                data: days.map((d) => d.costUsd),
                backgroundColor: COLORS.purple,
                yAxisID: 'y',
              },
              {
                type: 'line',
                label: 'month to date (USD)',
                data: cumulative,
                borderColor: COLORS.blue,
                backgroundColor: COLORS.blue,
                yAxisID: 'y',
              },
              ...(typeof budget === 'number'
                ? [
                    {
                      type: 'line' as const,
                      label: 'monthly budget (USD)',
                      data: days.map(() => budget),
                      borderColor: COLORS.red,
                      backgroundColor: COLORS.red,
                      borderDash: [6, 4],
                      pointRadius: 0,
                      yAxisID: 'y',
                    },
                  ]
                : []),
            ],
          },
          options: { scales: { y: { beginAtZero: true } } },
        }}
        table={{
          head: ['Day', 'Spend', 'Calls', 'Month to date'],
          rows: days.map((d, i) => [d.day, usd(d.costUsd), d.calls, usd(cumulative[i])]),
        }}
      />
    </>
  );
}

type ScmAlert = {
  id: string;
  kind: string;
  repo: string | null;
  severity: 'info' | 'warning' | 'critical';
  message: string;
  firstSeenAt: string;
  lastSeenAt: string;
  count: number;
  revision: number;
  dismissedAt: string | null;
};

/** The open SCM alerts (GET /scm), each with a Dismiss button (DELETE /scm/alerts/:id at its revision). */
function AlertsPanel() {
  const [alerts, reload] = useAsync((signal) => apiGet<{ alerts: ScmAlert[] }>('scm', {}, signal), []);
  const [failure, setFailure] = useState<string | null>(null);
  const dismiss = async (alert: ScmAlert) => {
    setFailure(null);
    try {
      await apiSend('DELETE', `scm/alerts/${encodeURIComponent(alert.id)}`, { revision: alert.revision });
    } catch (err) {
      setFailure(describeError(err));
    }
    reload();
  };
  return (
    <div class="panel" id="alerts">
      <h2>Alerts</h2>
      {failure && <p class="error-text">{failure}</p>}
      <Show value={alerts} what="the alerts" retry={reload}>
        {({ alerts: list }) => {
          const open = list.filter((a) => a.dismissedAt === null);
          return open.length === 0 ? (
            <Empty>No open alert.</Empty>
          ) : (
            <ul class="plain">
              {open.map((a) => (
                <li key={a.id}>
                  <Badge value={a.severity} /> <strong>{a.kind}</strong>
                  {a.repo ? ` · ${a.repo}` : ''} — {a.message}{' '}
                  <span class="muted small">
                    {a.count > 1 ? `${a.count} times, ` : ''}last {formatTime(a.lastSeenAt)}
                  </span>{' '}
                  <button type="button" class="secondary small" onClick={() => void dismiss(a)}>
                    Dismiss
                  </button>
                </li>
              ))}
            </ul>
          );
        }}
      </Show>
    </div>
  );
}
