import { useEffect, useState } from 'preact/hooks';
import { apiGet } from '../api';
import { Badge, Empty, formatTime, Show, TableHead, useAsync } from '../components';
import { BASE, navigate, prPath, useLocation } from '../router';

export type PullRequestItem = {
  repo: string;
  number: number;
  title: string | null;
  author: string | null;
  headSha: string | null;
  baseRef: string | null;
  draft: boolean | null;
  state: string | null;
  updatedAt: number;
  latestRun: {
    id: string;
    reviewKey: string;
    status: string;
    reason: string | null;
    updatedAt: number | null;
  } | null;
};

type Snapshot = {
  generatedAt: string;
  data: { items: PullRequestItem[]; truncated?: boolean; nextCursor?: string | null };
};

const RUN_STATUSES = ['queued', 'running', 'completed', 'failed', 'skipped', 'superseded', 'abandoned'];
const PAGE_SIZE = 25;

/** The snapshot list (operator-api 2.4): search, repository and status filters, pages of 25. */
export function PullRequests() {
  const loc = useLocation();
  const params = new URLSearchParams(loc.search);
  const q = params.get('q') ?? '';
  const repo = params.get('repo') ?? '';
  const status = params.get('status') ?? '';
  const page = Math.max(1, Number(params.get('page')) || 1);
  const cursor = params.get('cursor') ?? '';
  const [draft, setDraft] = useState(q);
  useEffect(() => setDraft(q), [q]);

  const [snapshot, reload] = useAsync(
    (signal) => apiGet<Snapshot>('snapshot', { q, repo, status, cursor }, signal),
    [q, repo, status, cursor],
  );
  const [repos] = useAsync(
    (signal) => apiGet<{ repos: { repo?: string; fullName?: string; name?: string }[] }>('repos', {}, signal),
    [],
  );
  const repoNames = new Set<string>();
  if (repos.state === 'ready')
    for (const r of repos.data.repos) repoNames.add(r.repo ?? r.fullName ?? r.name ?? '');
  for (const item of snapshot.data?.data.items ?? []) repoNames.add(item.repo);
  if (repo) repoNames.add(repo);
  repoNames.delete('');

  const go = (next: Record<string, string>) => {
    const p = new URLSearchParams({ q, repo, status, ...next });
    for (const [k, v] of [...p.entries()]) if (!v || (k === 'page' && v === '1')) p.delete(k);
    const qs = p.toString();
    navigate(`${BASE}/pull-requests${qs ? `?${qs}` : ''}`);
  };

  return (
    <section>
      <div class="heading-row">
        <h1>Pull requests</h1>
        <button type="button" class="secondary small" onClick={reload}>
          Refresh
        </button>
      </div>
      <form
        class="filters"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          go({ q: draft.trim(), page: '1', cursor: '' });
        }}
      >
        <div class="field">
          <label for="pr-q">Search</label>
          <input
            id="pr-q"
            type="search"
            placeholder="repository, title or author"
            maxLength={300}
            value={draft}
            onInput={(e) => setDraft((e.target as HTMLInputElement).value)}
          />
        </div>
        <div class="field">
          <label for="pr-repo">Repository</label>
          <select
            id="pr-repo"
            value={repo}
            onChange={(e) => go({ repo: (e.target as HTMLSelectElement).value, page: '1', cursor: '' })}
          >
            <option value="">All repositories</option>
            {[...repoNames].sort().map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="pr-status">Latest run</label>
          <select
            id="pr-status"
            value={status}
            onChange={(e) => go({ status: (e.target as HTMLSelectElement).value, page: '1', cursor: '' })}
          >
            <option value="">Any status</option>
            {RUN_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </div>
        <div class="field field-button">
          <button type="submit">Search</button>
          {(q || repo || status) && (
            <button
              type="button"
              class="secondary"
              onClick={() => go({ q: '', repo: '', status: '', page: '1', cursor: '' })}
            >
              Clear
            </button>
          )}
        </div>
      </form>
      <Show value={snapshot} what="pull requests" retry={reload}>
        {(snap) => {
          const items = snap.data.items;
          if (items.length === 0) {
            return (
              <Empty>
                {q || repo || status
                  ? 'No pull request matches these filters.'
                  : 'No pull request has been seen yet.'}
              </Empty>
            );
          }
          const serverPaging = 'nextCursor' in snap.data;
          const pages = serverPaging ? 1 : Math.ceil(items.length / PAGE_SIZE);
          const current = Math.min(page, pages);
          const shown = serverPaging ? items : items.slice((current - 1) * PAGE_SIZE, current * PAGE_SIZE);
          return (
            <>
              <div class="table-wrap">
                <table class="pr-table">
                  <caption class="sr-only">Pull requests, most recently updated first</caption>
                  <TableHead cols={['Pull request', 'Author', 'Latest run', 'Updated']} />
                  <tbody>
                    {shown.map((pr) => (
                      <tr key={`${pr.repo}#${pr.number}`}>
                        <td data-label="Pull request">
                          <a href={prPath(pr.repo, pr.number)}>
                            <span class="muted">
                              {pr.repo}#{pr.number}
                            </span>{' '}
                            {pr.title ?? '(no title)'}
                          </a>
                          {pr.draft && <span class="badge">draft</span>}
                        </td>
                        <td data-label="Author">{pr.author ?? '—'}</td>
                        <td data-label="Latest run">
                          {pr.latestRun ? (
                            <Badge value={pr.latestRun.status} />
                          ) : (
                            <span class="muted">no run</span>
                          )}
                          {pr.latestRun?.reason && <span class="muted small"> {pr.latestRun.reason}</span>}
                        </td>
                        <td data-label="Updated">{formatTime(pr.updatedAt)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <nav class="pager" aria-label="Pages">
                {serverPaging ? (
                  <>
                    <button type="button" class="secondary" disabled={!cursor} onClick={() => history.back()}>
                      Previous
                    </button>
                    <button
                      type="button"
                      class="secondary"
                      disabled={!snap.data.nextCursor}
                      onClick={() => go({ cursor: snap.data.nextCursor ?? '' })}
                    >
                      Next
                    </button>
                  </>
                ) : (
                  <>
                    <button
                      type="button"
                      class="secondary"
                      disabled={current <= 1}
                      onClick={() => go({ page: String(current - 1) })}
                    >
                      Previous
                    </button>
                    <span>
                      Page {current} of {pages} · {items.length} pull request{items.length === 1 ? '' : 's'}
                    </span>
                    <button
                      type="button"
                      class="secondary"
                      disabled={current >= pages}
                      onClick={() => go({ page: String(current + 1) })}
                    >
                      Next
                    </button>
                  </>
                )}
              </nav>
              {snap.data.truncated && (
                <p class="note">
                  Only the 100 most recently updated pull requests are listed (operator-api 8); narrow the
                  search or filters to find older ones.
                </p>
              )}
              <p class="muted small">Snapshot generated {formatTime(snap.generatedAt)}.</p>
            </>
          );
        }}
      </Show>
    </section>
  );
}
