import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError, apiGet, describeError, invalidField } from '../api';
import { ErrorState, Field, useAsync } from '../components';

/** The memory records as the operator API answers them (NAMES.md "Memory", docs/memory.md). */
export type MemoryContext = {
  id: string;
  repo: string | null;
  paths: string[];
  title: string;
  body: string;
  enabled: boolean;
  source: 'operator' | 'comment' | 'feedback';
  revision: number;
  createdAt: string;
  updatedAt: string;
  createdBy: string;
};

export type ClusterAction = 'none' | 'suppress' | 'keep';
export type MemoryCluster = {
  id: string;
  repo: string;
  label: string;
  action: ClusterAction;
  size: number;
  exemplar: { title: string; body: string; category: string | null; path: string | null };
  feedback: { up: number; down: number; dismissed: number; addressed: number };
  revision: number;
  createdAt: string;
  updatedAt: string;
};

export type KnowledgeSummary = {
  repo: string;
  path: string;
  title: string;
  revision: number;
  updatedAt: string;
  bytes: number;
};
export type KnowledgeDocument = Omit<KnowledgeSummary, 'bytes'> & { body: string };

/** The text limits the API enforces (docs/memory.md "Records"); the forms count against them. */
export const LIMITS = { title: 200, contextBody: 4000, knowledgeBody: 20_000, paths: 50 } as const;

/** Rows a list page asks for (the API's default and the most it answers is 100). */
export const PAGE = 50;

/** A field error of the API (`invalid_request` naming a field), as the forms keep it. */
export type FieldError = { path: string; message: string } | null;

/** The error's message when it names `path` or a part of it (`paths` for `paths.1`). */
export function errorAt(error: FieldError, path: string): string | null {
  return error && (error.path === path || error.path.startsWith(`${path}.`)) ? error.message : null;
}

/** What the last action did, announced as a status; nothing when there is nothing to say. */
export function Notice({ text }: { text: string | null }) {
  if (!text) return null;
  return (
    <p class="notice" role="status">
      {text}
    </p>
  );
}

/**
 * A form's save: `busy` while the handler `submit` wraps runs, which first clears the field error, the
 * failure and the notice the last save left; `refused(err)` keeps a failed call as the field error it
 * names, else as the failure.
 */
export function useSave() {
  const [error, setError] = useState<FieldError>(null);
  const [failure, setFailure] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const submit = (save: () => Promise<void>) => async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setFailure(null);
    setNotice(null);
    try {
      await save();
    } finally {
      setBusy(false);
    }
  };
  const refused = (err: unknown) => {
    const named = invalidField(err);
    if (named) setError(named);
    else setFailure(err);
  };
  return { error, setError, failure, setFailure, busy, notice, setNotice, submit, refused };
}

/**
 * What a form says under its fields: a field error that no field shows (it names none of `placed`), any
 * other failure, and the notice of what it last did.
 */
export function FormOutcome(props: {
  error: FieldError;
  placed: readonly string[];
  failure: unknown;
  notice: string | null;
}) {
  const { error } = props;
  return (
    <>
      {error && !props.placed.some((p) => errorAt(error, p)) && (
        <p class="field-error" role="alert">
          {error.message}
        </p>
      )}
      {props.failure != null && <ErrorState error={props.failure} />}
      <Notice text={props.notice} />
    </>
  );
}

/** The current revision a 409 `revision_conflict` names, else null. */
export function conflictRevision(err: unknown): number | null {
  if (!(err instanceof ApiError) || err.status !== 409 || err.code !== 'revision_conflict') return null;
  const revision = (err.body as { revision?: unknown } | null)?.revision;
  return typeof revision === 'number' ? revision : null;
}

/**
 * A list's row operations (on a context or a cluster, at the revision the list showed): while one runs its
 * row's buttons are `busy`; then the notice of what it did and a reload of the list, or, under the row
 * (`problemOf`), why it was refused: `changed` on a 409, `gone` on a 404, with "Reload the list".
 */
export function useRowActions<R extends { id: string; revision: number }>(
  reload: () => void,
  refusal: { changed: (row: R, current: number) => string; gone: string },
) {
  const [busy, setBusy] = useState<string | null>(null);
  const [problem, setProblem] = useState<{ id: string; message: string } | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  /** Runs `send` on `row`; what it answers is the notice. */
  const act = async (row: R, send: () => Promise<string>) => {
    setBusy(row.id);
    setProblem(null);
    setNotice(null);
    try {
      setNotice(await send());
      reload();
    } catch (err) {
      const current = conflictRevision(err);
      setProblem({
        id: row.id,
        message:
          current !== null
            ? refusal.changed(row, current)
            : err instanceof ApiError && err.status === 404
              ? refusal.gone
              : describeError(err),
      });
    } finally {
      setBusy(null);
    }
  };

  const problemOf = (row: R) =>
    problem?.id === row.id && (
      <div class="field-error" role="alert">
        {problem.message}{' '}
        <button
          type="button"
          class="secondary small"
          onClick={() => {
            setProblem(null);
            reload();
          }}
        >
          Reload the list
        </button>
      </div>
    );
  return { busy, notice, setNotice, act, problemOf };
}

/**
 * Whether a cluster's findings are withheld from reviews now: action `suppress`, or at least two
 * dismissals and no 👍 unless its action is `keep` (the server's `clusterSuppresses`, docs/memory.md
 * "Suppression").
 */
export function suppresses(c: Pick<MemoryCluster, 'action' | 'feedback'>): boolean {
  if (c.action === 'suppress') return true;
  if (c.action === 'keep') return false;
  return c.feedback.dismissed >= 2 && c.feedback.up === 0;
}

/** The id of the `<datalist>` of known repositories that the memory forms' repository inputs offer. */
export const REPOS_LIST = 'memory-repos';

/** The known repositories (`GET /repos`) as suggestions for the repository inputs; typing any other works. */
export function RepoSuggestions() {
  const [repos] = useAsync((signal) => apiGet<{ repos: { fullName: string }[] }>('repos', {}, signal), []);
  return (
    <datalist id={REPOS_LIST}>
      {(repos.data?.repos ?? []).map((r) => (
        <option key={r.fullName} value={r.fullName} />
      ))}
    </datalist>
  );
}

/** A character counter for a text field with a limit. */
export const counted = (value: string, max: number) =>
  `${value.length} / ${max.toLocaleString('en')} characters`;

/** A text field of a memory form: an input, or a textarea of `rows` lines; marked invalid while it has an error. */
export function TextField(props: {
  label: string;
  id: string;
  error: string | null;
  hint?: ComponentChildren;
  value: string;
  onInput(value: string): void;
  rows?: number;
  list?: string;
  placeholder?: string;
}) {
  const control = {
    id: props.id,
    value: props.value,
    'aria-invalid': props.error ? true : undefined,
    onInput: (e: Event) => props.onInput((e.target as HTMLInputElement).value),
  };
  return (
    <Field label={props.label} id={props.id} error={props.error} hint={props.hint}>
      {props.rows ? (
        <textarea rows={props.rows} {...control} />
      ) : (
        <input type="text" list={props.list} placeholder={props.placeholder} {...control} />
      )}
    </Field>
  );
}

/** A list's filter form: its fields, Filter, and Clear while a filter is applied. */
export function FilterForm(props: {
  label: string;
  active: boolean;
  onApply(): void;
  onClear(): void;
  children: ComponentChildren;
}) {
  return (
    <form
      class="filters"
      role="search"
      aria-label={props.label}
      onSubmit={(e) => {
        e.preventDefault();
        props.onApply();
      }}
    >
      {props.children}
      <div class="field field-button">
        <button type="submit">Filter</button>
        {props.active && (
          <button type="button" class="secondary" onClick={props.onClear}>
            Clear
          </button>
        )}
      </div>
    </form>
  );
}

/** The repository field of a filter, offering the known repositories. */
export function RepoInput(props: {
  id: string;
  value: string;
  error: string | null;
  onInput(value: string): void;
}) {
  return (
    <Field label="Repository" id={props.id} error={props.error}>
      <input
        id={props.id}
        type="text"
        list={REPOS_LIST}
        placeholder="owner/name"
        value={props.value}
        onInput={(e) => props.onInput((e.target as HTMLInputElement).value)}
      />
    </Field>
  );
}

/** A filter by repository alone: what is typed applies on Filter (`onApply` with it trimmed), '' on Clear. */
export function RepoFilter(props: {
  label: string;
  id: string;
  repo: string;
  error: string | null;
  onApply(repo: string): void;
}) {
  const [draft, setDraft] = useState('');
  return (
    <FilterForm
      label={props.label}
      active={props.repo !== ''}
      onApply={() => props.onApply(draft.trim())}
      onClear={() => {
        setDraft('');
        props.onApply('');
      }}
    >
      <RepoInput id={props.id} value={draft} error={props.error} onInput={setDraft} />
    </FilterForm>
  );
}

/** Previous and next pages of a list read `PAGE` rows at a time from `offset`; absent on a single page. */
export function OffsetPager(props: {
  what: string;
  offset: number;
  shown: number;
  onOffset(offset: number): void;
}) {
  const { offset, shown } = props;
  if (offset === 0 && shown < PAGE) return null;
  return (
    <nav class="pager" aria-label={`Pages of ${props.what}`}>
      <button
        type="button"
        class="secondary"
        disabled={offset === 0}
        onClick={() => props.onOffset(Math.max(0, offset - PAGE))}
      >
        Previous
      </button>
      <span class="muted small">
        {offset + 1}–{offset + shown}
      </span>
      <button
        type="button"
        class="secondary"
        disabled={shown < PAGE}
        onClick={() => props.onOffset(offset + PAGE)}
      >
        Next
      </button>
    </nav>
  );
}
