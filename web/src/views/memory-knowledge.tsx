import { useState } from 'preact/hooks';
import { ApiError, apiGet, apiSend, describeError, invalidField } from '../api';
import { ConfirmDialog, Empty, formatTime, Show, TableHead, useAsync } from '../components';
import {
  conflictRevision,
  counted,
  errorAt,
  LIMITS,
  PAGE,
  REPOS_LIST,
  type KnowledgeDocument,
  type KnowledgeSummary,
  RepoFilter,
  OffsetPager,
  Notice,
  FormOutcome,
  TextField,
  useSave,
} from './memory-shared';

type Where = { repo: string; path: string };
type Editing = { mode: 'new' } | { mode: 'replace'; document: KnowledgeDocument } | null;

const sameDoc = (a: Where | null, b: Where) =>
  a !== null && a.repo.toLowerCase() === b.repo.toLowerCase() && a.path === b.path;
const bytesText = (n: number) => (n < 1024 ? `${n} B` : `${(n / 1024).toFixed(1)} KiB`);

/**
 * Knowledge documents (notes on a part of a repository): the list by repository, one document opened,
 * a new one written (`PUT` without a revision) or one replaced (`PUT` with the revision read). The API has
 * no delete: an empty body retires a document (it is never given to a review), which "Retire" does.
 */
export function Knowledge() {
  const [repo, setRepo] = useState('');
  const [offset, setOffset] = useState(0);
  const [list, reload] = useAsync(
    (signal) =>
      apiGet<{ documents: KnowledgeSummary[] }>('memory/knowledge', { repo, limit: PAGE, offset }, signal),
    [repo, offset],
  );
  const [open, setOpen] = useState<Where | null>(null);
  const [editing, setEditing] = useState<Editing>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [version, setVersion] = useState(0);
  const filterError = list.state === 'error' ? invalidField(list.error) : null;

  const saved = (doc: KnowledgeDocument, created: boolean) => {
    setEditing(null);
    setOpen({ repo: doc.repo, path: doc.path });
    setVersion((v) => v + 1);
    setNotice(
      `${created ? 'Created' : doc.body === '' ? 'Retired' : 'Replaced'} “${doc.title}” (${doc.repo} ${doc.path}): revision ${doc.revision}.`,
    );
    reload();
  };

  return (
    <div class="panel" id="memory-knowledge">
      <div class="heading-row">
        <h2>Knowledge documents</h2>
        <button
          type="button"
          class="small"
          disabled={editing?.mode === 'new'}
          onClick={() => {
            setEditing({ mode: 'new' });
            setNotice(null);
          }}
        >
          New document
        </button>
      </div>
      <p class="muted small">
        Notes on a part of a repository. A review of a pull request is given the repository's document at{' '}
        <code>/</code> and those whose path is a changed file or a directory above one.
      </p>
      {editing && (
        <KnowledgeForm
          key={editing.mode === 'replace' ? `${editing.document.repo} ${editing.document.path}` : 'new'}
          initial={editing.mode === 'replace' ? editing.document : null}
          onSaved={saved}
          onCancel={() => setEditing(null)}
        />
      )}
      <RepoFilter
        label="Filter knowledge documents"
        id="kn-filter-repo"
        repo={repo}
        error={errorAt(filterError, 'repo')}
        onApply={(value) => {
          setOffset(0);
          setRepo(value);
        }}
      />
      <Notice text={notice} />
      {filterError ? null : (
        <Show value={list} what="knowledge documents" retry={reload}>
          {({ documents }) =>
            documents.length === 0 ? (
              <Empty>{repo || offset > 0 ? 'No document matches.' : 'No knowledge document yet.'}</Empty>
            ) : (
              <>
                <div class="table-wrap">
                  <table class="stack-table memory-table" aria-label="Knowledge documents">
                    <TableHead
                      cols={['Document', 'Repository', 'Size', 'Updated', <span class="sr-only">Open</span>]}
                    />
                    <tbody>
                      {documents.map((d) => (
                        <tr key={`${d.repo} ${d.path}`} class={sameDoc(open, d) ? 'selected' : undefined}>
                          <td data-label="Document" class="wrap">
                            <strong>{d.title}</strong>
                            <div>
                              <code>{d.path}</code>
                            </div>
                          </td>
                          <td data-label="Repository">{d.repo}</td>
                          <td data-label="Size">
                            {d.bytes === 0 ? <span class="badge">retired (empty)</span> : bytesText(d.bytes)}
                          </td>
                          <td data-label="Updated">
                            <div class="small">{formatTime(d.updatedAt)}</div>
                            <div class="muted small">revision {d.revision}</div>
                          </td>
                          <td data-label="">
                            <button
                              type="button"
                              class="secondary small"
                              aria-label={`Open ${d.repo} ${d.path}`}
                              aria-pressed={sameDoc(open, d)}
                              onClick={() => {
                                setOpen(sameDoc(open, d) ? null : { repo: d.repo, path: d.path });
                                setNotice(null);
                              }}
                            >
                              {sameDoc(open, d) ? 'Close' : 'Open'}
                            </button>
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
                <OffsetPager
                  what="knowledge documents"
                  offset={offset}
                  shown={documents.length}
                  onOffset={setOffset}
                />
              </>
            )
          }
        </Show>
      )}
      {open && (
        <DocumentView
          key={`${open.repo} ${open.path} ${version}`}
          where={open}
          onClose={() => setOpen(null)}
          onReplace={(document) => {
            setEditing({ mode: 'replace', document });
            setNotice(null);
          }}
          onSaved={(doc) => saved(doc, false)}
        />
      )}
    </div>
  );
}

/** One document, read whole (`GET /memory/knowledge/document`), with Replace and Retire. */
function DocumentView({
  where,
  onClose,
  onReplace,
  onSaved,
}: {
  where: Where;
  onClose: () => void;
  onReplace: (doc: KnowledgeDocument) => void;
  onSaved: (doc: KnowledgeDocument) => void;
}) {
  const [value, reload] = useAsync(
    (signal) =>
      apiGet<{ document: KnowledgeDocument | null }>('memory/knowledge/document', { ...where }, signal),
    [where.repo, where.path],
  );
  const [retiring, setRetiring] = useState<KnowledgeDocument | null>(null);
  const [failure, setFailure] = useState<string | null>(null);

  const retire = async (doc: KnowledgeDocument) => {
    setRetiring(null);
    setFailure(null);
    try {
      const out = await apiSend<{ document: KnowledgeDocument }>('PUT', 'memory/knowledge/document', {
        repo: doc.repo,
        path: doc.path,
        body: '',
        revision: doc.revision,
      });
      onSaved(out.document);
    } catch (err) {
      const current = conflictRevision(err);
      setFailure(
        current !== null
          ? `Someone changed this document first (it is at revision ${current}, you read ${doc.revision}): nothing was retired. Reload it and decide again.`
          : describeError(err),
      );
    }
  };

  return (
    <article class="document" aria-label={`Knowledge document ${where.repo} ${where.path}`}>
      <Show value={value} what="the document" retry={reload}>
        {({ document }) =>
          document === null ? (
            <Empty>
              There is no document at {where.repo} <code>{where.path}</code>.
            </Empty>
          ) : (
            <>
              <div class="heading-row">
                <h3>{document.title}</h3>
                <div class="row-actions">
                  <button type="button" class="small" onClick={() => onReplace(document)}>
                    Replace…
                  </button>
                  {document.body !== '' && (
                    <button type="button" class="secondary small" onClick={() => setRetiring(document)}>
                      Retire…
                    </button>
                  )}
                  <button type="button" class="secondary small" onClick={onClose}>
                    Close
                  </button>
                </div>
              </div>
              <p class="muted small">
                {document.repo} · <code>{document.path}</code> · revision {document.revision} · saved{' '}
                {formatTime(document.updatedAt)}
              </p>
              {document.body === '' ? (
                <p class="muted">Empty: this document is retired and never given to a review.</p>
              ) : (
                <pre class="code">{document.body}</pre>
              )}
              {failure && (
                <div class="field-error" role="alert">
                  {failure}{' '}
                  <button
                    type="button"
                    class="secondary small"
                    onClick={() => {
                      setFailure(null);
                      reload();
                    }}
                  >
                    Reload
                  </button>
                </div>
              )}
            </>
          )
        }
      </Show>
      {retiring && (
        <ConfirmDialog
          title="Retire this document?"
          confirmLabel="Retire"
          onCancel={() => setRetiring(null)}
          onConfirm={() => retire(retiring)}
        >
          <p>
            The body of “{retiring.title}” ({retiring.repo} <code>{retiring.path}</code>) is emptied, so
            reviews are no longer given it. The operator API has no deletion of knowledge documents: an empty
            document is how one is retired. Its text is not kept.
          </p>
        </ConfirmDialog>
      )}
    </article>
  );
}

type Draft = { repo: string; path: string; title: string; body: string };
type Conflict = { latest: KnowledgeDocument };

/**
 * Writes a new document (`PUT` without a revision, which never overwrites: an existing document is a 409)
 * or replaces one at the revision it was opened with. On a 409 it reads the document as it is now and lets
 * the operator reload it (dropping their text) or put their text over that revision.
 */
function KnowledgeForm({
  initial,
  onSaved,
  onCancel,
}: {
  initial: KnowledgeDocument | null;
  onSaved: (doc: KnowledgeDocument, created: boolean) => void;
  onCancel: () => void;
}) {
  const [base, setBase] = useState(initial);
  const [form, setForm] = useState<Draft>(() => ({
    repo: initial?.repo ?? '',
    path: initial?.path ?? '/',
    title: initial?.title ?? '',
    body: initial?.body ?? '',
  }));
  const { error, failure, setFailure, busy, notice, setNotice, submit, refused } = useSave();
  const [conflict, setConflict] = useState<Conflict | null>(null);
  const set = (key: keyof Draft, value: string) => {
    setForm((f) => ({ ...f, [key]: value }));
    setNotice(null);
  };

  const save = submit(async () => {
    const where = base ? { repo: base.repo, path: base.path } : { repo: form.repo.trim(), path: form.path };
    try {
      const out = await apiSend<{ document: KnowledgeDocument }>('PUT', 'memory/knowledge/document', {
        ...where,
        ...(form.title !== '' ? { title: form.title } : {}),
        body: form.body,
        ...(base ? { revision: base.revision } : {}),
      });
      onSaved(out.document, base === null);
    } catch (err) {
      if (conflictRevision(err) !== null) {
        try {
          const { document } = await apiGet<{ document: KnowledgeDocument | null }>(
            'memory/knowledge/document',
            where,
          );
          if (document) setConflict({ latest: document });
          else setFailure(err);
        } catch (again) {
          setFailure(again);
        }
      } else if (base && err instanceof ApiError && err.status === 404) {
        setFailure(err);
      } else {
        refused(err);
      }
    }
  });

  const reloadLatest = () => {
    if (!conflict) return;
    const d = conflict.latest;
    setBase(d);
    setForm({ repo: d.repo, path: d.path, title: d.title, body: d.body });
    setConflict(null);
    setNotice(`Showing revision ${d.revision}; your text was dropped.`);
  };
  const keepMine = () => {
    if (!conflict) return;
    setBase(conflict.latest);
    setConflict(null);
    setNotice(
      `Your text will replace revision ${conflict.latest.revision} when you save. Read that revision first if you are not sure.`,
    );
  };

  const heading = base ? `Replace ${base.repo} ${base.path}` : 'New knowledge document';
  return (
    <form class="memory-form" aria-label={heading} onSubmit={save} noValidate>
      <h3>{heading}</h3>
      {base && (
        <p class="muted small">
          Replacing revision {base.revision} (saved {formatTime(base.updatedAt)}).
        </p>
      )}
      {conflict && (
        <div class="conflict" role="alert">
          <h4>{base ? 'Someone changed this document first' : 'This document exists already'}</h4>
          <p>
            {conflict.latest.repo} <code>{conflict.latest.path}</code> is at revision{' '}
            {conflict.latest.revision} (“{conflict.latest.title}”, saved{' '}
            {formatTime(conflict.latest.updatedAt)}). Nothing of yours was saved yet.
          </p>
          <pre class="code small">
            {conflict.latest.body.length > 600
              ? `${conflict.latest.body.slice(0, 600)}…`
              : conflict.latest.body || '(empty)'}
          </pre>
          <div class="row-actions">
            <button type="button" onClick={reloadLatest}>
              Reload revision {conflict.latest.revision}
            </button>
            <button type="button" class="secondary" onClick={keepMine}>
              Replace it with my text
            </button>
          </div>
        </div>
      )}
      {base ? null : (
        <div class="grid">
          <TextField
            label="Repository"
            id="kn-repo"
            error={errorAt(error, 'repo')}
            hint="owner/name: a document belongs to one repository."
            list={REPOS_LIST}
            value={form.repo}
            onInput={(v) => set('repo', v)}
          />
          <TextField
            label="Path"
            id="kn-path"
            error={errorAt(error, 'path')}
            hint={
              <>
                <code>/</code> for the whole repository, or a file or directory (<code>src/api</code>) without
                a leading or trailing <code>/</code>. One document per repository and path.
              </>
            }
            value={form.path}
            onInput={(v) => set('path', v)}
          />
        </div>
      )}
      <TextField
        label="Title"
        id="kn-title"
        error={errorAt(error, 'title')}
        hint={`${base ? 'Empty: keeps the current title.' : 'Empty: titled by its path.'} ${counted(form.title, LIMITS.title)}`}
        value={form.title}
        onInput={(v) => set('title', v)}
      />
      <TextField
        label="Body"
        id="kn-body"
        error={errorAt(error, 'body')}
        hint={`Empty: the document is retired (never given to a review). ${counted(form.body, LIMITS.knowledgeBody)}`}
        rows={10}
        value={form.body}
        onInput={(v) => set('body', v)}
      />
      <FormOutcome
        error={error}
        placed={['repo', 'path', 'title', 'body']}
        failure={failure}
        notice={notice}
      />
      <div class="row-actions">
        <button type="submit" disabled={busy}>
          {busy ? 'Saving…' : base ? 'Replace document' : 'Create document'}
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
