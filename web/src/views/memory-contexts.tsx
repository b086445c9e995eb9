import { useState } from 'preact/hooks';
import { ApiError, apiGet, apiSend, invalidField } from '../api';
import { Badge, ConfirmDialog, Empty, Field, formatTime, Show, TableHead, useAsync } from '../components';
import {
  conflictRevision,
  counted,
  errorAt,
  LIMITS,
  PAGE,
  REPOS_LIST,
  type MemoryContext,
  FilterForm,
  OffsetPager,
  RepoInput,
  Notice,
  useRowActions,
  FormOutcome,
  TextField,
  useSave,
} from './memory-shared';

/** What the context form edits; `paths` is one glob per line. */
type Draft = { repo: string; paths: string; title: string; body: string; enabled: boolean };
type Patch = Partial<{ repo: string | null; paths: string[]; title: string; body: string; enabled: boolean }>;

const draftOf = (c: MemoryContext | null): Draft => ({
  repo: c?.repo ?? '',
  paths: (c?.paths ?? []).join('\n'),
  title: c?.title ?? '',
  body: c?.body ?? '',
  enabled: c?.enabled ?? true,
});
const globsOf = (text: string) =>
  text
    .split('\n')
    .map((s) => s.trim())
    .filter((s) => s !== '');
const repoOf = (text: string) => (text.trim() === '' ? null : text.trim());

/** The fields of `draft` that differ from `base`, as a PATCH sends them. */
function changes(base: MemoryContext, draft: Draft): Patch {
  const out: Patch = {};
  const repo = repoOf(draft.repo);
  if (repo !== base.repo) out.repo = repo;
  const paths = globsOf(draft.paths);
  if (JSON.stringify(paths) !== JSON.stringify(base.paths)) out.paths = paths;
  if (draft.title !== base.title) out.title = draft.title;
  if (draft.body !== base.body) out.body = draft.body;
  if (draft.enabled !== base.enabled) out.enabled = draft.enabled;
  return out;
}

const FIELD_LABELS: Record<keyof Draft, string> = {
  repo: 'Repository',
  paths: 'Paths',
  title: 'Title',
  body: 'Body',
  enabled: 'Enabled',
};

const scopeOf = (c: Pick<MemoryContext, 'repo'>) => c.repo ?? 'every repository';
const shown = (key: keyof Draft, value: unknown) => {
  if (key === 'repo') return value === null || value === '' ? 'every repository' : String(value);
  if (key === 'paths')
    return (value as string[]).length === 0 ? 'every path' : (value as string[]).join(', ');
  if (key === 'enabled') return value ? 'enabled' : 'disabled';
  const s = String(value);
  return s.length > 120 ? `${s.slice(0, 117)}…` : s;
};

type Editing = { mode: 'new' } | { mode: 'edit'; context: MemoryContext } | null;

/**
 * Contexts (rules the reviews follow): filter by repository and text, create, edit (with the revision
 * read; a 409 shows the newer revision and lets the operator reload it or keep their edits), enable or
 * disable, delete after confirmation.
 */
export function Contexts() {
  const [filter, setFilter] = useState({ repo: '', q: '' });
  const [draft, setDraft] = useState(filter);
  const [offset, setOffset] = useState(0);
  const [list, reload] = useAsync(
    (signal) =>
      apiGet<{ contexts: MemoryContext[] }>(
        'memory/contexts',
        { repo: filter.repo, q: filter.q, limit: PAGE, offset },
        signal,
      ),
    [filter.repo, filter.q, offset],
  );
  const [editing, setEditing] = useState<Editing>(null);
  const [deleting, setDeleting] = useState<MemoryContext | null>(null);
  const { busy, notice, setNotice, act, problemOf } = useRowActions<MemoryContext>(reload, {
    changed: (c, current) =>
      `This context was changed by someone else since the list was loaded (it is at revision ${current}, the list showed ${c.revision}). Reload the list to see it, then try again.`,
    gone: 'This context no longer exists: someone deleted it. Reload the list.',
  });
  const filterError = list.state === 'error' ? invalidField(list.error) : null;

  const toggle = (c: MemoryContext) =>
    act(c, async () => {
      await apiSend('PATCH', `memory/contexts/${encodeURIComponent(c.id)}`, {
        revision: c.revision,
        enabled: !c.enabled,
      });
      return `${c.enabled ? 'Disabled' : 'Enabled'} “${c.title}”.`;
    });

  const remove = (c: MemoryContext) => {
    setDeleting(null);
    void act(c, async () => {
      await apiSend('DELETE', `memory/contexts/${encodeURIComponent(c.id)}`, { revision: c.revision });
      if (editing?.mode === 'edit' && editing.context.id === c.id) setEditing(null);
      return `Deleted “${c.title}”.`;
    });
  };

  return (
    <div class="panel" id="memory-contexts">
      <div class="heading-row">
        <h2>Contexts</h2>
        <button
          type="button"
          class="small"
          disabled={editing?.mode === 'new'}
          onClick={() => {
            setEditing({ mode: 'new' });
            setNotice(null);
          }}
        >
          New context
        </button>
      </div>
      <p class="muted small">
        Rules the reviews follow. An enabled context is given to the review of a pull request of its
        repository (or of any repository, when it has none) that changes a path one of its globs matches (or
        any path, when it has none).
      </p>
      {editing && (
        <ContextForm
          key={editing.mode === 'edit' ? editing.context.id : 'new'}
          initial={editing.mode === 'edit' ? editing.context : null}
          onCancel={() => setEditing(null)}
          onSaved={(saved, created) => {
            setEditing(null);
            setNotice(
              created
                ? `Created “${saved.title}” (revision ${saved.revision}).`
                : `Saved “${saved.title}”: revision ${saved.revision}.`,
            );
            if (created) setOffset(0);
            reload();
          }}
          onGone={() => {
            setEditing(null);
            setNotice('That context no longer exists: someone deleted it while you were editing.');
            reload();
          }}
        />
      )}
      <FilterForm
        label="Filter contexts"
        active={Boolean(filter.repo || filter.q)}
        onApply={() => {
          setOffset(0);
          setFilter({ repo: draft.repo.trim(), q: draft.q.trim() });
        }}
        onClear={() => {
          setDraft({ repo: '', q: '' });
          setFilter({ repo: '', q: '' });
          setOffset(0);
        }}
      >
        <RepoInput
          id="ctx-filter-repo"
          value={draft.repo}
          error={errorAt(filterError, 'repo')}
          onInput={(repo) => setDraft({ ...draft, repo })}
        />
        <Field label="Text" id="ctx-filter-q" error={errorAt(filterError, 'q')}>
          <input
            id="ctx-filter-q"
            type="search"
            placeholder="in the title or body"
            maxLength={300}
            value={draft.q}
            onInput={(e) => setDraft({ ...draft, q: (e.target as HTMLInputElement).value })}
          />
        </Field>
      </FilterForm>
      {filter.repo && (
        <p class="muted small">
          Only the contexts of {filter.repo}; contexts for every repository are listed without a repository
          filter.
        </p>
      )}
      <Notice text={notice} />
      {filterError ? null : (
        <Show value={list} what="contexts" retry={reload}>
          {({ contexts }) =>
            contexts.length === 0 ? (
              <Empty>
                {filter.repo || filter.q || offset > 0
                  ? 'No context matches.'
                  : 'No context yet. Create one, or reply “@verdict learn …” to one of Verdict’s line comments.'}
              </Empty>
            ) : (
              <>
                <div class="table-wrap">
                  <table class="stack-table memory-table" aria-label="Contexts">
                    <TableHead
                      cols={[
                        'Context',
                        'Applies to',
                        'State',
                        'Source',
                        'Updated',
                        <span class="sr-only">Actions</span>,
                      ]}
                    />
                    <tbody>
                      {contexts.map((c) => (
                        <tr key={c.id} data-context-id={c.id}>
                          <td data-label="Context" class="wrap">
                            <strong>{c.title}</strong>
                            <div class="muted small clamp">{c.body}</div>
                            <code class="small muted">{c.id}</code>
                          </td>
                          <td data-label="Applies to">
                            <div>{scopeOf(c)}</div>
                            <div class="small">
                              {c.paths.length === 0 ? (
                                <span class="muted">every path</span>
                              ) : (
                                c.paths.map((p) => (
                                  <code key={p} class="glob">
                                    {p}
                                  </code>
                                ))
                              )}
                            </div>
                          </td>
                          <td data-label="State">
                            <Badge value={c.enabled ? 'enabled' : 'disabled'} />
                          </td>
                          <td data-label="Source">
                            <Badge value={c.source} />
                            <div class="muted small">by {c.createdBy}</div>
                          </td>
                          <td data-label="Updated">
                            <div class="small">{formatTime(c.updatedAt)}</div>
                            <div class="muted small">revision {c.revision}</div>
                          </td>
                          <td data-label="Actions">
                            <div class="row-actions">
                              <button
                                type="button"
                                class="secondary small"
                                aria-label={`Edit “${c.title}”`}
                                onClick={() => {
                                  setEditing({ mode: 'edit', context: c });
                                  setNotice(null);
                                }}
                              >
                                Edit
                              </button>
                              <button
                                type="button"
                                class="secondary small"
                                disabled={busy === c.id}
                                aria-label={`${c.enabled ? 'Disable' : 'Enable'} “${c.title}”`}
                                onClick={() => toggle(c)}
                              >
                                {c.enabled ? 'Disable' : 'Enable'}
                              </button>
                              <button
                                type="button"
                                class="secondary small"
                                disabled={busy === c.id}
                                aria-label={`Delete “${c.title}”`}
                                onClick={() => setDeleting(c)}
                              >
                                Delete…
                              </button>
                            </div>
                            {problemOf(c)}
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
                <OffsetPager what="contexts" offset={offset} shown={contexts.length} onOffset={setOffset} />
              </>
            )
          }
        </Show>
      )}
      {deleting && (
        <ConfirmDialog
          title="Delete this context?"
          confirmLabel="Delete"
          onCancel={() => setDeleting(null)}
          onConfirm={() => remove(deleting)}
        >
          <p>
            “{deleting.title}” ({scopeOf(deleting)}) is deleted: reviews are no longer given it. This cannot
            be undone; disable it instead to keep it for later.
          </p>
        </ConfirmDialog>
      )}
    </div>
  );
}

type Conflict = { latest: MemoryContext; mine: (keyof Draft)[] };

/** The form that creates a context, or edits one at the revision it was opened with. */
function ContextForm({
  initial,
  onSaved,
  onCancel,
  onGone,
}: {
  initial: MemoryContext | null;
  onSaved: (context: MemoryContext, created: boolean) => void;
  onCancel: () => void;
  onGone: () => void;
}) {
  const [base, setBase] = useState(initial);
  const [form, setForm] = useState<Draft>(() => draftOf(initial));
  const { error, failure, setFailure, busy, notice, setNotice, submit, refused } = useSave();
  const [conflict, setConflict] = useState<Conflict | null>(null);
  const editing = base !== null;
  const patch = base ? changes(base, form) : {};
  const dirty = Object.keys(patch) as (keyof Draft)[];
  const globs = globsOf(form.paths);
  const set = (key: keyof Draft, value: string | boolean) => {
    setForm((f) => ({ ...f, [key]: value }));
    setNotice(null);
  };
  const fieldError = (key: keyof Draft) => {
    const message = errorAt(error, key);
    if (!message || key !== 'paths') return message;
    // `paths.1` names the second glob sent: quote it, since blank lines are not sent.
    const index = /^paths\.(\d+)/.exec(error!.path)?.[1];
    const glob = index !== undefined ? globs[Number(index)] : undefined;
    return glob !== undefined ? `${message} (“${glob}”)` : message;
  };

  const save = submit(async () => {
    try {
      if (base) {
        const out = await apiSend<{ context: MemoryContext }>(
          'PATCH',
          `memory/contexts/${encodeURIComponent(base.id)}`,
          { revision: base.revision, ...patch },
        );
        onSaved(out.context, false);
      } else {
        const repo = repoOf(form.repo);
        const out = await apiSend<{ context: MemoryContext }>('POST', 'memory/contexts', {
          ...(repo !== null ? { repo } : {}),
          ...(globs.length > 0 ? { paths: globs } : {}),
          title: form.title,
          body: form.body,
          enabled: form.enabled,
        });
        onSaved(out.context, true);
      }
    } catch (err) {
      if (base && conflictRevision(err) !== null) {
        try {
          const { context } = await apiGet<{ context: MemoryContext }>(
            `memory/contexts/${encodeURIComponent(base.id)}`,
          );
          setConflict({ latest: context, mine: dirty });
        } catch (again) {
          if (again instanceof ApiError && again.status === 404) onGone();
          else setFailure(again);
        }
      } else if (base && err instanceof ApiError && err.status === 404) {
        onGone();
      } else {
        refused(err);
      }
    }
  });

  /** Shows the newer revision, dropping my edits. */
  const reloadLatest = () => {
    if (!conflict) return;
    setBase(conflict.latest);
    setForm(draftOf(conflict.latest));
    setConflict(null);
    setNotice(`Showing revision ${conflict.latest.revision}; your edits were dropped.`);
  };
  /** Takes the newer revision as the base and puts my changed fields back on top of it. */
  const keepMine = () => {
    if (!conflict) return;
    const next = draftOf(conflict.latest);
    for (const key of conflict.mine) (next as Record<string, unknown>)[key] = form[key];
    setBase(conflict.latest);
    setForm(next);
    setConflict(null);
    setNotice(
      `Your edits are applied over revision ${conflict.latest.revision}. Review them and save again.`,
    );
  };

  const title = editing ? `Edit context “${base.title}”` : 'New context';
  return (
    <form class="memory-form" aria-label={title} onSubmit={save} noValidate>
      <h3>{title}</h3>
      {base && (
        <p class="muted small">
          <code>{base.id}</code> · revision {base.revision} · {base.source} context by {base.createdBy} ·
          created {formatTime(base.createdAt)}
        </p>
      )}
      {conflict && base && (
        <div class="conflict" role="alert">
          <h4>Someone changed this context first</h4>
          <p>
            It is at revision {conflict.latest.revision} (saved {formatTime(conflict.latest.updatedAt)}) while
            you were editing revision {base.revision}. Nothing of yours was saved yet.
          </p>
          <div class="table-wrap">
            <table>
              <TableHead cols={['Field', 'Newer value', 'Yours']} />
              <tbody>
                {(Object.keys(FIELD_LABELS) as (keyof Draft)[])
                  .filter((k) => conflict.mine.includes(k) || k in changes(base, draftOf(conflict.latest)))
                  .map((k) => {
                    const latestDraft = draftOf(conflict.latest);
                    const value = (d: Draft) =>
                      k === 'paths' ? globsOf(d.paths) : k === 'repo' ? repoOf(d.repo) : d[k];
                    return (
                      <tr key={k} class={conflict.mine.includes(k) ? 'mine' : undefined}>
                        <th scope="row">{FIELD_LABELS[k]}</th>
                        <td>{shown(k, value(latestDraft))}</td>
                        <td>
                          {conflict.mine.includes(k) ? (
                            shown(k, value(form))
                          ) : (
                            <span class="muted">unchanged</span>
                          )}
                        </td>
                      </tr>
                    );
                  })}
              </tbody>
            </table>
          </div>
          <div class="row-actions">
            <button type="button" onClick={reloadLatest}>
              Reload revision {conflict.latest.revision}
            </button>
            <button type="button" class="secondary" onClick={keepMine}>
              Keep my edits on revision {conflict.latest.revision}
            </button>
          </div>
        </div>
      )}
      <div class="grid">
        <TextField
          label="Repository"
          id="ctx-repo"
          error={fieldError('repo')}
          hint="owner/name. Empty: every repository of the workspace."
          list={REPOS_LIST}
          placeholder="every repository"
          value={form.repo}
          onInput={(v) => set('repo', v)}
        />
        <TextField
          label="Paths"
          id="ctx-paths"
          error={fieldError('paths')}
          hint={
            <>
              One glob per line (<code>src/**</code>, <code>lib/*.ts</code>), at most {LIMITS.paths}. Empty:
              every path.
            </>
          }
          rows={3}
          value={form.paths}
          onInput={(v) => set('paths', v)}
        />
      </div>
      <TextField
        label="Title"
        id="ctx-title"
        error={fieldError('title')}
        hint={counted(form.title, LIMITS.title)}
        value={form.title}
        onInput={(v) => set('title', v)}
      />
      <TextField
        label="Body"
        id="ctx-body"
        error={fieldError('body')}
        hint={`The rule as the review is given it. ${counted(form.body, LIMITS.contextBody)}`}
        rows={4}
        value={form.body}
        onInput={(v) => set('body', v)}
      />
      <div class="field check">
        <input
          id="ctx-enabled"
          type="checkbox"
          checked={form.enabled}
          onChange={(e) => set('enabled', (e.target as HTMLInputElement).checked)}
        />
        <label for="ctx-enabled">Enabled: reviews are given this context</label>
        {fieldError('enabled') && (
          <p class="field-error" role="alert">
            {fieldError('enabled')}
          </p>
        )}
      </div>
      <FormOutcome error={error} placed={Object.keys(FIELD_LABELS)} failure={failure} notice={notice} />
      <div class="row-actions">
        <button type="submit" disabled={busy || (editing && dirty.length === 0)}>
          {busy ? 'Saving…' : editing ? 'Save context' : 'Create context'}
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
        {editing && dirty.length === 0 && <span class="muted small">No changes yet.</span>}
      </div>
    </form>
  );
}
