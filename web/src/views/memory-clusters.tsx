import { useState } from 'preact/hooks';
import { apiGet, apiSend, invalidField } from '../api';
import { Badge, ConfirmDialog, Empty, formatTime, Show, TableHead, useAsync } from '../components';
import {
  errorAt,
  PAGE,
  suppresses,
  type ClusterAction,
  type MemoryCluster,
  RepoFilter,
  OffsetPager,
  Notice,
  useRowActions,
} from './memory-shared';

const ACTIONS: { value: ClusterAction; label: string }[] = [
  { value: 'none', label: 'none (feedback decides)' },
  { value: 'suppress', label: 'suppress (always withhold)' },
  { value: 'keep', label: 'keep (never withhold)' },
];

/**
 * Clusters (findings that look alike and what reviewers did with them): their exemplar, size and
 * feedback, whether their findings are withheld now, the action an operator sets (PATCH with the
 * revision read), and deletion after confirmation.
 */
export function Clusters() {
  const [repo, setRepo] = useState('');
  const [offset, setOffset] = useState(0);
  const [list, reload] = useAsync(
    (signal) =>
      apiGet<{ clusters: MemoryCluster[] }>('memory/clusters', { repo, limit: PAGE, offset }, signal),
    [repo, offset],
  );
  const { busy, notice, act, problemOf } = useRowActions<MemoryCluster>(reload, {
    changed: (c, current) =>
      `This cluster changed since the list was loaded (it is at revision ${current}, the list showed ${c.revision}): Verdict may have counted new feedback. Reload the list, then try again.`,
    gone: 'This cluster no longer exists. Reload the list.',
  });
  const [deleting, setDeleting] = useState<MemoryCluster | null>(null);
  const filterError = list.state === 'error' ? invalidField(list.error) : null;

  const setAction = (c: MemoryCluster, action: ClusterAction) => {
    if (action === c.action) return;
    void act(c, async () => {
      const out = await apiSend<{ cluster: MemoryCluster }>(
        'PATCH',
        `memory/clusters/${encodeURIComponent(c.id)}`,
        { revision: c.revision, action },
      );
      return `“${out.cluster.label}” is now ${action} (revision ${out.cluster.revision}).`;
    });
  };

  const remove = (c: MemoryCluster) => {
    setDeleting(null);
    void act(c, async () => {
      await apiSend('DELETE', `memory/clusters/${encodeURIComponent(c.id)}`, { revision: c.revision });
      return `Deleted the cluster “${c.label}”.`;
    });
  };

  return (
    <div class="panel" id="memory-clusters">
      <h2>Clusters</h2>
      <p class="muted small">
        Findings that look alike, and what reviewers did with them. A new finding like a cluster's is withheld
        (stored as suppressed, never posted) when the cluster's action is <em>suppress</em>, or when reviewers
        dismissed at least two and gave none a thumbs-up, unless its action is <em>keep</em>. Verdict counts
        the findings and the feedback; here an operator sets the action or deletes a cluster.
      </p>
      <RepoFilter
        label="Filter clusters"
        id="clu-filter-repo"
        repo={repo}
        error={errorAt(filterError, 'repo')}
        onApply={(value) => {
          setOffset(0);
          setRepo(value);
        }}
      />
      <Notice text={notice} />
      {filterError ? null : (
        <Show value={list} what="clusters" retry={reload}>
          {({ clusters }) =>
            clusters.length === 0 ? (
              <Empty>
                {repo || offset > 0
                  ? 'No cluster matches.'
                  : 'No cluster yet. Clusters come from reviewers’ feedback on Verdict’s line comments, or from the API and the CLI (verdict memory add-cluster).'}
              </Empty>
            ) : (
              <>
                <div class="table-wrap">
                  <table class="stack-table memory-table" aria-label="Clusters">
                    <TableHead
                      cols={[
                        'Cluster',
                        'Findings',
                        'Feedback',
                        'Action',
                        <span class="sr-only">Delete</span>,
                      ]}
                    />
                    <tbody>
                      {clusters.map((c) => {
                        const withheld = suppresses(c);
                        const selectId = `clu-action-${c.id}`;
                        return (
                          <tr key={c.id} data-cluster-id={c.id}>
                            <td data-label="Cluster" class="wrap">
                              <strong>{c.label}</strong>
                              <div class="small">{c.repo}</div>
                              <details class="small">
                                <summary>Exemplar: {c.exemplar.title}</summary>
                                <p class="clamp-none">{c.exemplar.body}</p>
                                <p class="muted">
                                  {c.exemplar.category ?? 'no category'}
                                  {c.exemplar.path ? (
                                    <>
                                      {' · '}
                                      <code>{c.exemplar.path}</code>
                                    </>
                                  ) : null}
                                </p>
                              </details>
                              <div class="muted small">
                                revision {c.revision} · updated {formatTime(c.updatedAt)}
                              </div>
                            </td>
                            <td data-label="Findings">{c.size}</td>
                            <td data-label="Feedback">
                              <dl class="feedback small" aria-label={`Feedback on “${c.label}”`}>
                                <div>
                                  <dt title="thumbs-up reactions">up</dt>
                                  <dd>{c.feedback.up}</dd>
                                </div>
                                <div>
                                  <dt title="thumbs-down reactions">down</dt>
                                  <dd>{c.feedback.down}</dd>
                                </div>
                                <div>
                                  <dt>dismissed</dt>
                                  <dd>{c.feedback.dismissed}</dd>
                                </div>
                                <div>
                                  <dt>addressed</dt>
                                  <dd>{c.feedback.addressed}</dd>
                                </div>
                              </dl>
                            </td>
                            <td data-label="Action">
                              <label class="sr-only" for={selectId}>
                                Action of “{c.label}”
                              </label>
                              <select
                                id={selectId}
                                value={c.action}
                                disabled={busy === c.id}
                                onChange={(e) =>
                                  setAction(c, (e.target as HTMLSelectElement).value as ClusterAction)
                                }
                              >
                                {ACTIONS.map((a) => (
                                  <option key={a.value} value={a.value}>
                                    {a.label}
                                  </option>
                                ))}
                              </select>
                              <div>
                                {withheld ? (
                                  <Badge value="withheld" />
                                ) : (
                                  <span class="badge badge-posted">posted</span>
                                )}
                                <span class="muted small">
                                  {' '}
                                  {withheld
                                    ? c.action === 'suppress'
                                      ? 'findings like these are withheld'
                                      : 'withheld: dismissed at least twice, no thumbs-up'
                                    : 'findings like these are posted'}
                                </span>
                              </div>
                              {problemOf(c)}
                            </td>
                            <td data-label="">
                              <button
                                type="button"
                                class="secondary small"
                                disabled={busy === c.id}
                                aria-label={`Delete the cluster “${c.label}”`}
                                onClick={() => setDeleting(c)}
                              >
                                Delete…
                              </button>
                            </td>
                          </tr>
                        );
                      })}
                    </tbody>
                  </table>
                </div>
                <OffsetPager what="clusters" offset={offset} shown={clusters.length} onOffset={setOffset} />
              </>
            )
          }
        </Show>
      )}
      {deleting && (
        <ConfirmDialog
          title="Delete this cluster?"
          confirmLabel="Delete"
          onCancel={() => setDeleting(null)}
          onConfirm={() => remove(deleting)}
        >
          <p>
            “{deleting.label}” ({deleting.repo}) and its feedback counts are deleted: findings like it are no
            longer withheld because of it. This cannot be undone; set its action to <em>none</em> instead to
            let feedback decide.
          </p>
        </ConfirmDialog>
      )}
    </div>
  );
}
