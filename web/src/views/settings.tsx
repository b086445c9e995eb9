import { useState } from 'preact/hooks';
import { ApiError, apiGet, apiSend, describeError } from '../api';
import { Empty, Field, formatTime, Show, TableHead, useAsync } from '../components';
import { FilterRules, type FilterRule } from './filter-rules';
import { errorAt, FormOutcome, useSave } from './memory-shared';

type Section = { enabled: boolean; collapsible: boolean; defaultOpen: boolean };
export type Policy = {
  autoEnableNewRepos: boolean;
  autoReviewNewCommits: boolean;
  reviewDrafts: boolean;
  fileChangeLimit: number;
  filters: FilterRule[];
  customInstructions: string;
  strictness: 'low' | 'medium' | 'high';
  commentHeader: string;
  updatePrDescription: boolean;
  promptToFix: boolean;
  featureTips: boolean;
  summary: Record<'summary' | 'confidence' | 'files' | 'diagram' | 'outsideDiff', Section>;
  statusChecks: { enabled: boolean; requiredConfidence: number; postStatusComments: boolean };
  autoApprove: {
    enabled: boolean;
    maxRisk: 'low' | 'medium' | 'high' | 'critical';
    instructions: string;
    filters: FilterRule[];
  };
  execution: { mode: 'always' | 'never' | 'filters'; filters: FilterRule[] };
  memoryRuleCreation: 'ADMINS_ONLY' | 'MEMBERS' | 'EVERYONE';
  pausedAuthors: string[];
  monthlyModelBudgetUsd: number | null;
};
/** `server`: what this server runs whatever the policy says (GET /settings only). */
type ServerState = { validation: { switch: 'on' | 'off' | 'auto'; running: boolean } };
type SettingsAnswer = { settings: Policy; revision: number; updatedAt: string; server?: ServerState };

const SECTIONS = [
  ['summary', 'Summary'],
  ['confidence', 'Confidence'],
  ['files', 'Files'],
  ['diagram', 'Diagram'],
  ['outsideDiff', 'Outside the diff'],
] as const;

const clone = <T,>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/** Every leaf path of a document (`a.b.0.c`), for diffs; arrays of rules count as one leaf each. */
function leaves(value: unknown, prefix = '', out = new Map<string, string>()): Map<string, string> {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) leaves(v, prefix ? `${prefix}.${k}` : k, out);
  } else {
    out.set(prefix, JSON.stringify(value));
  }
  return out;
}

function getAt(doc: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], doc);
}

function setAt<T>(doc: T, path: string, value: unknown): T {
  const next = clone(doc) as Record<string, unknown>;
  const keys = path.split('.');
  let o = next;
  for (const k of keys.slice(0, -1)) o = o[k] as Record<string, unknown>;
  o[keys[keys.length - 1]!] = value;
  return next as T;
}

/** The paths whose value differs between two documents. */
function changedPaths(a: unknown, b: unknown): string[] {
  const la = leaves(a);
  const lb = leaves(b);
  return [...new Set([...la.keys(), ...lb.keys()])].filter((k) => la.get(k) !== lb.get(k));
}

/** The path an API validation error names, without the leading `settings.`. */
function errorPath(err: ApiError): string {
  const body = (err.body ?? {}) as { path?: unknown };
  let path = Array.isArray(body.path) ? body.path.join('.') : typeof body.path === 'string' ? body.path : '';
  if (!path) path = /field:?\s+([\w.[\]]+)/.exec(err.message)?.[1] ?? '';
  return path.replace(/\[(\d+)\]/g, '.$1').replace(/^settings\.?/, '');
}

type Conflict = { latest: SettingsAnswer; mine: string[] };

export function Settings() {
  const [loaded, reload, setLoaded] = useAsync(
    (signal) => apiGet<SettingsAnswer>('settings', {}, signal),
    [],
  );
  return (
    <section>
      <h1>Settings</h1>
      <Show value={loaded} what="the review policy" retry={reload}>
        {(s) => (
          <PolicyForm
            saved={s}
            onSaved={(next) => setLoaded({ state: 'ready', data: { ...next, server: s.server } })}
          />
        )}
      </Show>
      <Repositories />
    </section>
  );
}

function PolicyForm({ saved, onSaved }: { saved: SettingsAnswer; onSaved: (s: SettingsAnswer) => void }) {
  const [base, setBase] = useState(saved);
  const [form, setForm] = useState<Policy>(() => clone(saved.settings));
  const { error, setError, failure, setFailure, busy, notice, setNotice, submit } = useSave();
  const [conflict, setConflict] = useState<Conflict | null>(null);

  const dirty = changedPaths(base.settings, form);
  const set = (path: string, value: unknown) => {
    setForm((f) => setAt(f, path, value));
    setNotice(null);
  };
  const errorFor = (path: string) => errorAt(error, path);

  const save = submit(async () => {
    try {
      const out = await apiSend<SettingsAnswer>('PATCH', 'settings', {
        revision: base.revision,
        settings: form,
      });
      setConflict(null);
      onSaved(out);
      setBase(out);
      setForm(clone(out.settings));
      setNotice(`Saved: revision ${out.revision}.`);
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) {
        try {
          const latest = await apiGet<SettingsAnswer>('settings');
          setConflict({ latest, mine: dirty });
        } catch (again) {
          setFailure(again);
        }
      } else if (err instanceof ApiError && err.status === 400) {
        setError({ path: errorPath(err), message: err.message });
      } else {
        setFailure(err);
      }
    }
  });

  /** Takes the newer revision as the base and puts my changed fields back on top of it. */
  const reapply = () => {
    if (!conflict) return;
    let next = clone(conflict.latest.settings);
    for (const path of conflict.mine) next = setAt(next, path, clone(getAt(form, path)));
    setBase(conflict.latest);
    setForm(next);
    setConflict(null);
    setNotice(
      `Your edits are applied over revision ${conflict.latest.revision}. Review them and save again.`,
    );
  };
  const discard = () => {
    if (!conflict) return;
    setBase(conflict.latest);
    setForm(clone(conflict.latest.settings));
    setConflict(null);
    setNotice(`Showing revision ${conflict.latest.revision}; your edits were discarded.`);
  };

  const F = { form, set, errorFor };
  return (
    <form class="policy" onSubmit={save} noValidate aria-describedby="policy-status">
      <p class="muted" id="policy-status">
        Revision {base.revision} · saved {formatTime(base.updatedAt)}
        {dirty.length > 0 && (
          <strong>
            {' '}
            · {dirty.length} unsaved change{dirty.length === 1 ? '' : 's'}
          </strong>
        )}
      </p>
      {conflict && (
        <div class="conflict" role="alert">
          <h2>Someone saved the policy first</h2>
          <p>
            Revision {conflict.latest.revision} was saved {formatTime(conflict.latest.updatedAt)} while you
            were editing revision {base.revision}. Nothing of yours was saved yet, and nothing is lost.
          </p>
          <div class="table-wrap">
            <table>
              <TableHead cols={['Field', 'You had', 'Newer value', 'Yours']} />
              <tbody>
                {[
                  ...new Set([...changedPaths(base.settings, conflict.latest.settings), ...conflict.mine]),
                ].map((p) => (
                  <tr key={p} class={conflict.mine.includes(p) ? 'mine' : undefined}>
                    <th scope="row">
                      <code>{p}</code>
                    </th>
                    <td>{short(getAt(base.settings, p))}</td>
                    <td>{short(getAt(conflict.latest.settings, p))}</td>
                    <td>
                      {conflict.mine.includes(p) ? (
                        short(getAt(form, p))
                      ) : (
                        <span class="muted">unchanged</span>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <div class="row-actions">
            <button type="button" onClick={reapply}>
              Reapply my edits on revision {conflict.latest.revision}
            </button>
            <button type="button" class="secondary" onClick={discard}>
              Discard my edits
            </button>
          </div>
        </div>
      )}

      <fieldset>
        <legend>Code review</legend>
        <Check {...F} path="autoEnableNewRepos" label="Enable new repositories automatically" />
        <Check {...F} path="autoReviewNewCommits" label="Review new commits pushed to a pull request" />
        <Check {...F} path="reviewDrafts" label="Review draft pull requests" />
        <NumberInput
          {...F}
          path="fileChangeLimit"
          label="File change limit"
          min={1}
          max={100000}
          hint="Larger pull requests are refused (1 to 100000)."
        />
        <Choice {...F} path="strictness" label="Strictness" options={['low', 'medium', 'high']} />
        <TextArea {...F} path="customInstructions" label="Custom instructions" max={20000} />
        <TextInput {...F} path="commentHeader" label="Comment header" max={500} />
        <Check
          {...F}
          path="updatePrDescription"
          label="Write the summary into the pull request description"
        />
        <Check {...F} path="promptToFix" label="Append a 'Prompt to Fix' block" />
        <Check {...F} path="featureTips" label="Append a footer listing bot commands" />
        <Field
          label="Review filters"
          error={errorFor('filters')}
          hint="Review only matching pull requests; no rule matches every pull request."
        >
          <FilterRules
            idPrefix="filters"
            rules={form.filters}
            onChange={(r) => set('filters', r)}
            error={error}
            errorBase="filters"
          />
        </Field>
      </fieldset>

      <fieldset>
        <legend>Summary sections</legend>
        <div class="table-wrap">
          <table class="sections">
            <TableHead cols={['Section', 'Enabled', 'Collapsible', 'Open by default']} />
            <tbody>
              {SECTIONS.map(([key, label]) => (
                <tr key={key}>
                  <th scope="row">{label}</th>
                  {(['enabled', 'collapsible', 'defaultOpen'] as const).map((flag) => (
                    <td key={flag}>
                      <input
                        type="checkbox"
                        id={`summary-${key}-${flag}`}
                        aria-label={`${label}: ${flag === 'defaultOpen' ? 'open by default' : flag}`}
                        checked={form.summary[key][flag]}
                        onChange={(e) =>
                          set(`summary.${key}.${flag}`, (e.target as HTMLInputElement).checked)
                        }
                      />
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {errorFor('summary') && <p class="field-error">{errorFor('summary')}</p>}
        <p class="muted small">Disabling the confidence section also disables auto approval.</p>
      </fieldset>

      <fieldset>
        <legend>Checks and approval</legend>
        <Check {...F} path="statusChecks.enabled" label="Publish a check run" />
        <NumberInput
          {...F}
          path="statusChecks.requiredConfidence"
          label="Required confidence"
          min={0}
          max={5}
          hint="0 to 5"
        />
        <Check {...F} path="statusChecks.postStatusComments" label="Post status comments" />
        <Check {...F} path="autoApprove.enabled" label="Approve automatically" />
        <Choice
          {...F}
          path="autoApprove.maxRisk"
          label="Highest risk to approve"
          options={['low', 'medium', 'high', 'critical']}
        />
        <TextArea {...F} path="autoApprove.instructions" label="Approval instructions" max={20000} />
        <Field
          label="Approval filters"
          error={errorFor('autoApprove.filters')}
          hint="A pull request must match these and the review filters."
        >
          <FilterRules
            idPrefix="approve"
            rules={form.autoApprove.filters}
            onChange={(r) => set('autoApprove.filters', r)}
            error={error}
            errorBase="autoApprove.filters"
          />
        </Field>
      </fieldset>

      <fieldset>
        <legend>Sandbox execution</legend>
        <Choice
          {...F}
          path="execution.mode"
          label="Run validation"
          options={['always', 'never', 'filters']}
        />
        <ServerValidation server={saved.server} mode={form.execution.mode} />
        {form.execution.mode === 'filters' ? (
          <Field label="Execution filters" error={errorFor('execution.filters')}>
            <FilterRules
              idPrefix="execution"
              rules={form.execution.filters}
              onChange={(r) => set('execution.filters', r)}
              error={error}
              errorBase="execution.filters"
            />
          </Field>
        ) : (
          <p class="muted small">
            Execution filters apply only when the mode is "filters" ({form.execution.filters.length} rule(s)
            kept).
          </p>
        )}
      </fieldset>

      <fieldset>
        <legend>Other</legend>
        <Choice
          {...F}
          path="memoryRuleCreation"
          label="Who may create memory rules"
          options={['ADMINS_ONLY', 'MEMBERS', 'EVERYONE']}
          hint="Stored, with no effect: `@verdict learn` is authorized as the manual review commands are (docs/memory.md)."
        />
        <Field
          label="Paused authors"
          id="pausedAuthors"
          error={errorFor('pausedAuthors')}
          hint="One login per line (at most 500); their pull requests are skipped."
        >
          <textarea
            id="pausedAuthors"
            rows={3}
            value={form.pausedAuthors.join('\n')}
            onInput={(e) =>
              set(
                'pausedAuthors',
                (e.target as HTMLTextAreaElement).value
                  .split('\n')
                  .map((s) => s.trim())
                  .filter((s, i, all) => s !== '' || i === all.length - 1),
              )
            }
            onBlur={() =>
              set(
                'pausedAuthors',
                form.pausedAuthors.filter((s) => s !== ''),
              )
            }
          />
        </Field>
        <Field
          label="Monthly model budget (USD)"
          id="monthlyModelBudgetUsd"
          error={errorFor('monthlyModelBudgetUsd')}
          hint="Empty for no budget. Reviews are refused once the month's known cost reaches it."
        >
          <input
            id="monthlyModelBudgetUsd"
            type="number"
            min={0}
            step="0.01"
            inputMode="decimal"
            value={form.monthlyModelBudgetUsd ?? ''}
            onInput={(e) => {
              const v = (e.target as HTMLInputElement).value;
              set('monthlyModelBudgetUsd', v === '' ? null : Number(v));
            }}
          />
        </Field>
      </fieldset>

      <FormOutcome error={error} placed={PLACED} failure={failure} notice={notice} />
      <div class="row-actions sticky-actions">
        <button type="submit" disabled={busy || dirty.length === 0}>
          {busy ? 'Saving…' : 'Save policy'}
        </button>
        <button
          type="button"
          class="secondary"
          disabled={dirty.length === 0}
          onClick={() => {
            setForm(clone(base.settings));
            setError(null);
            setNotice(null);
          }}
        >
          Undo changes
        </button>
      </div>
    </form>
  );
}

/** Field paths that have their own place in the form (an error elsewhere is shown above the save button). */
const PLACED = [
  'autoEnableNewRepos',
  'autoReviewNewCommits',
  'reviewDrafts',
  'fileChangeLimit',
  'strictness',
  'customInstructions',
  'commentHeader',
  'updatePrDescription',
  'promptToFix',
  'featureTips',
  'filters',
  'summary',
  'statusChecks',
  'autoApprove',
  'execution',
  'memoryRuleCreation',
  'pausedAuthors',
  'monthlyModelBudgetUsd',
];

function short(v: unknown): string {
  const s = JSON.stringify(v ?? null);
  return s.length > 120 ? `${s.slice(0, 117)}…` : s;
}

type FieldProps = {
  form: Policy;
  set: (path: string, v: unknown) => void;
  errorFor: (path: string) => string | null;
  path: string;
  label: string;
};
const idOf = (path: string) => path.replace(/\./g, '-');

function Check({ form, set, errorFor, path, label }: FieldProps) {
  const id = idOf(path);
  const error = errorFor(path);
  return (
    <div class={`field check${error ? ' has-error' : ''}`}>
      <input
        id={id}
        type="checkbox"
        checked={Boolean(getAt(form, path))}
        onChange={(e) => set(path, (e.target as HTMLInputElement).checked)}
        aria-describedby={error ? `${id}-error` : undefined}
      />
      <label for={id}>{label}</label>
      {error && (
        <p class="field-error" role="alert" id={`${id}-error`}>
          {error}
        </p>
      )}
    </div>
  );
}

function NumberInput({
  form,
  set,
  errorFor,
  path,
  label,
  min,
  max,
  hint,
}: FieldProps & { min: number; max: number; hint?: string }) {
  const id = idOf(path);
  const error = errorFor(path);
  return (
    <Field label={label} id={id} error={error} hint={hint}>
      <input
        id={id}
        type="number"
        inputMode="numeric"
        min={min}
        max={max}
        step={1}
        value={String(getAt(form, path) ?? '')}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
        onInput={(e) => {
          const v = (e.target as HTMLInputElement).value;
          set(path, v === '' ? null : Number(v));
        }}
      />
    </Field>
  );
}

function Choice({
  form,
  set,
  errorFor,
  path,
  label,
  options,
  hint,
}: FieldProps & { options: string[]; hint?: string }) {
  const id = idOf(path);
  const error = errorFor(path);
  return (
    <Field label={label} id={id} error={error} {...(hint !== undefined && { hint })}>
      <select
        id={id}
        value={String(getAt(form, path))}
        onChange={(e) => set(path, (e.target as HTMLSelectElement).value)}
        aria-invalid={error ? true : undefined}
      >
        {options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    </Field>
  );
}

function TextArea({ form, set, errorFor, path, label, max }: FieldProps & { max: number }) {
  const id = idOf(path);
  const error = errorFor(path);
  const value = String(getAt(form, path) ?? '');
  return (
    <Field label={label} id={id} error={error} hint={`${value.length} / ${max} characters`}>
      <textarea
        id={id}
        rows={4}
        value={value}
        aria-invalid={error ? true : undefined}
        onInput={(e) => set(path, (e.target as HTMLTextAreaElement).value)}
      />
    </Field>
  );
}

function TextInput({ form, set, errorFor, path, label, max }: FieldProps & { max: number }) {
  const id = idOf(path);
  const error = errorFor(path);
  return (
    <Field label={label} id={id} error={error} hint={`at most ${max} characters`}>
      <input
        id={id}
        type="text"
        value={String(getAt(form, path) ?? '')}
        aria-invalid={error ? true : undefined}
        onInput={(e) => set(path, (e.target as HTMLInputElement).value)}
      />
    </Field>
  );
}

type Repo = { fullName: string; installed: boolean; config: { enabled?: boolean } | null; updatedAt: number };

/** The repository list with enable and disable (operator-api 2.8, `PATCH /repos/:encodedRepo`). */
function Repositories() {
  const [repos, reload, setRepos] = useAsync((signal) => apiGet<{ repos: Repo[] }>('repos', {}, signal), []);
  const [busy, setBusy] = useState<string | null>(null);
  const [failure, setFailure] = useState<{ repo: string; error: unknown } | null>(null);
  const toggle = async (repo: Repo) => {
    const enabled = !(repo.config?.enabled ?? false);
    setBusy(repo.fullName);
    setFailure(null);
    try {
      await apiSend('PATCH', `repos/${encodeURIComponent(repo.fullName)}`, { enabled, reason: 'dashboard' });
      setRepos((v) =>
        v.data
          ? {
              state: 'ready',
              data: {
                repos: v.data.repos.map((r) =>
                  r.fullName === repo.fullName ? { ...r, config: { ...(r.config ?? {}), enabled } } : r,
                ),
              },
            }
          : v,
      );
    } catch (error) {
      setFailure({ repo: repo.fullName, error });
    } finally {
      setBusy(null);
    }
  };
  return (
    <div class="panel">
      <h2>Repositories</h2>
      <Show value={repos} what="repositories" retry={reload}>
        {({ repos: list }) =>
          list.length === 0 ? (
            <Empty>No repository is known yet: install the GitHub App on one.</Empty>
          ) : (
            <ul class="repos plain">
              {list.map((r) => {
                const enabled = r.config?.enabled ?? false;
                // No configuration: reviewed only when autoEnableNewRepos is on or it was reviewed before.
                const state =
                  r.config?.enabled === undefined ? 'not configured' : enabled ? 'enabled' : 'disabled';
                return (
                  <li key={r.fullName}>
                    <span>
                      <strong>{r.fullName}</strong>{' '}
                      {r.installed ? '' : <span class="muted small">(not installed)</span>}
                      <span
                        class={`badge badge-${enabled ? 'enabled' : 'disabled'}`}
                        title={
                          state === 'not configured'
                            ? 'Reviewed only when autoEnableNewRepos is on or it was reviewed before'
                            : undefined
                        }
                      >
                        {state}
                      </span>
                    </span>
                    <button
                      type="button"
                      class="secondary small"
                      disabled={busy === r.fullName}
                      onClick={() => toggle(r)}
                      aria-label={`${enabled ? 'Disable' : 'Enable'} ${r.fullName}`}
                    >
                      {busy === r.fullName ? 'Saving…' : enabled ? 'Disable' : 'Enable'}
                    </button>
                    {failure?.repo === r.fullName && (
                      <p class="field-error">{describeError(failure.error)}</p>
                    )}
                  </li>
                );
              })}
            </ul>
          )
        }
      </Show>
    </div>
  );
}

/** The effective state next to the policy: the server's switch can keep validation off whatever it says. */
function ServerValidation({ server, mode }: { server: ServerState | undefined; mode: string }) {
  if (!server) return null;
  const { switch: sw, running } = server.validation;
  const why =
    sw === 'off'
      ? 'off on this server (VERDICT_VALIDATION_ENABLED=0): nothing runs whatever this setting says; reviews say "disabled_by_operator"'
      : !running
        ? 'off on this server: no executor is available (bwrap is not on PATH, no E2B_API_KEY); reviews say "SKIPPED bubblewrap: binary unavailable"'
        : mode === 'never'
          ? 'available on this server, and this policy turns it off ("execution_disabled")'
          : `on on this server (${sw === 'on' ? 'VERDICT_VALIDATION_ENABLED=1' : 'an executor is available'}): this setting decides`;
  return (
    <p class="muted small" data-testid="server-validation">
      Effective: validation is {why}.
    </p>
  );
}
