import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, describeError } from './api';

export type Async<T> =
  { state: 'loading'; data?: T } | { state: 'ready'; data: T } | { state: 'error'; error: unknown; data?: T };

/**
 * Loads `load()` whenever `deps` change (aborting the previous load) and on `reload()`; keeps the last
 * data while reloading so a list does not flash empty.
 */
export function useAsync<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]) {
  const [value, setValue] = useState<Async<T>>({ state: 'loading' });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const ctrl = new AbortController();
    setValue((v) => ({ state: 'loading', data: v.data }));
    load(ctrl.signal).then(
      (data) => !ctrl.signal.aborted && setValue({ state: 'ready', data }),
      (error) => !ctrl.signal.aborted && setValue((v) => ({ state: 'error', error, data: v.data })),
    );
    return () => ctrl.abort();
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return [value, reload, setValue] as const;
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="state state-loading" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" /> Loading {what}…
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="state state-empty">{children}</p>;
}

export function ErrorState({ error, retry }: { error: unknown; retry?: () => void }) {
  const notFound = error instanceof ApiError && error.status === 404;
  return (
    <div class="state state-error" role="alert">
      <strong>{notFound ? 'Not found.' : 'Something went wrong.'}</strong> <span>{describeError(error)}</span>
      {retry && (
        <button type="button" class="secondary" onClick={retry}>
          Try again
        </button>
      )}
    </div>
  );
}

/**
 * A labelled form field with its hint and the error the API gave for it (`<id>-error`, announced as an
 * alert). Without `id` the label is a plain caption (for a group of controls).
 */
export function Field({
  label,
  id,
  error,
  hint,
  children,
}: {
  label: string;
  id?: string;
  error: string | null;
  hint?: ComponentChildren;
  children: ComponentChildren;
}) {
  return (
    <div class={`field${error ? ' has-error' : ''}`}>
      {id ? <label for={id}>{label}</label> : <span class="label">{label}</span>}
      {children}
      {hint && <p class="muted small">{hint}</p>}
      {error && (
        <p class="field-error" role="alert" id={id ? `${id}-error` : undefined}>
          {error}
        </p>
      )}
    </div>
  );
}

/** A table's header row: a column header (`<th scope="col">`) per entry. */
export function TableHead({ cols }: { cols: ComponentChildren[] }) {
  return (
    <thead>
      <tr>
        {cols.map((c, i) => (
          <th scope="col" key={i}>
            {c}
          </th>
        ))}
      </tr>
    </thead>
  );
}

/** Renders the loading, error or data state of an `Async`. */
export function Show<T>({
  value,
  what,
  retry,
  children,
}: {
  value: Async<T>;
  what: string;
  retry?: () => void;
  children: (data: T) => ComponentChildren;
}) {
  if (value.state === 'error') return <ErrorState error={value.error} retry={retry} />;
  if (value.data === undefined) return <Loading what={what} />;
  return <>{children(value.data)}</>;
}

/** A modal confirmation (the native `<dialog>`: focus moves in, Escape cancels). */
export function ConfirmDialog({
  title,
  children,
  confirmLabel,
  onConfirm,
  onCancel,
}: {
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  return (
    <dialog
      ref={ref}
      class="confirm"
      aria-labelledby="confirm-title"
      onCancel={(e) => {
        e.preventDefault();
        onCancel();
      }}
    >
      <h2 id="confirm-title">{title}</h2>
      <div>{children}</div>
      <div class="actions">
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
        <button type="button" onClick={onConfirm} autofocus>
          {confirmLabel}
        </button>
      </div>
    </dialog>
  );
}

export function Badge({ value }: { value: string | null | undefined }) {
  const v = value ?? 'unknown';
  return <span class={`badge badge-${v.replace(/[^a-z0-9-]/gi, '-').toLowerCase()}`}>{v}</span>;
}

export function formatTime(value: string | number | null | undefined): string {
  if (value === null || value === undefined || value === '') return '—';
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) return String(value);
  return d.toISOString().replace('T', ' ').slice(0, 19) + ' UTC';
}

export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 120) return `${s.toFixed(1)} s`;
  const m = s / 60;
  if (m < 120) return `${m.toFixed(1)} min`;
  return `${(m / 60).toFixed(1)} h`;
}

export const usd = (v: number | null | undefined) =>
  v === null || v === undefined ? 'unknown' : `$${v < 1 ? v.toFixed(4) : v.toFixed(2)}`;

export const count = (v: number | null | undefined) =>
  v === null || v === undefined ? 'unknown' : v.toLocaleString('en');
