import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError, apiGet, apiSend, describeError } from '../api';
import { Badge, ErrorState, Field, Show, useAsync } from '../components';
import { errorAt, REPOS_LIST, type MemoryCluster, type MemoryContext, useSave } from './memory-shared';

type Integration = { id: string; name: string; enabled: boolean; description: string };
type PreviewAnswer = {
  preview: {
    contexts: string[];
    knowledge: string[];
    linkedIssues: number[];
    instructionFiles: string[];
    suppressedClusters: string[];
  };
  /** What the prompt budget left out, and the linked issues that were not given (with why). */
  memory: {
    leftOut: { contexts: number; knowledge: number; linkedIssues: number };
    skippedIssues: Array<{ number: number; reason: string }>;
  };
  pullRequest: {
    repo: string;
    number: number;
    title: string;
    headSha: string;
    baseRef: string;
    changedFiles: number;
  };
  notes: string[];
};
/** The preview with the titles of its contexts and the labels of its clusters, where they could be read. */
type Shown = PreviewAnswer & { contextTitles: Map<string, string>; clusterLabels: Map<string, string> };

/**
 * The integrations (read-only: they have no switch of their own) and the preview of what a review of a
 * pull request would be given (`POST /memory/integrations/preview`, admin only; it reads GitHub, calls no
 * model and stores nothing).
 */
export function Preview() {
  const [integrations, reloadIntegrations] = useAsync(
    (signal) => apiGet<{ integrations: Integration[] }>('memory/integrations', {}, signal),
    [],
  );
  const [repo, setRepo] = useState('');
  const [number, setNumber] = useState('');
  const { error, failure, busy, submit, refused } = useSave();
  const [result, setResult] = useState<Shown | null>(null);

  const run = submit(async () => {
    setResult(null);
    const n = number.trim();
    try {
      const answer = await apiSend<PreviewAnswer>('POST', 'memory/integrations/preview', {
        repo: repo.trim(),
        number: /^\d{1,10}$/.test(n) ? Number(n) : n,
      });
      setResult(await named(answer));
    } catch (err) {
      refused(err);
    }
  });
  const placed = error && (errorAt(error, 'repo') || errorAt(error, 'number'));

  return (
    <div class="panel" id="memory-preview">
      <h2>Integrations and preview</h2>
      <Show value={integrations} what="integrations" retry={reloadIntegrations}>
        {({ integrations: list }) => (
          <ul class="plain integrations">
            {list.map((i) => (
              <li key={i.id}>
                <strong>{i.name}</strong> <Badge value={i.enabled ? 'enabled' : 'disabled'} />{' '}
                <code class="small muted">{i.id}</code>
                <div class="muted small">{i.description}</div>
              </li>
            ))}
          </ul>
        )}
      </Show>
      <p class="muted small">
        Integrations have no switch of their own: the two that read GitHub are enabled when this deployment
        has the GitHub App's credentials.
      </p>
      <h3>Preview a review's memory</h3>
      <p class="muted small">
        What a review of a pull request would be given, read from GitHub now: no model is called and nothing
        is stored.
      </p>
      <form class="filters" aria-label="Preview a review's memory" onSubmit={run} noValidate>
        <Field label="Repository" id="pv-repo" error={errorAt(error, 'repo')}>
          <input
            id="pv-repo"
            type="text"
            list={REPOS_LIST}
            placeholder="owner/name"
            value={repo}
            aria-invalid={errorAt(error, 'repo') ? true : undefined}
            onInput={(e) => setRepo((e.target as HTMLInputElement).value)}
          />
        </Field>
        <Field label="Pull request number" id="pv-number" error={errorAt(error, 'number')}>
          <input
            id="pv-number"
            type="text"
            inputMode="numeric"
            size={8}
            value={number}
            aria-invalid={errorAt(error, 'number') ? true : undefined}
            onInput={(e) => setNumber((e.target as HTMLInputElement).value)}
          />
        </Field>
        <div class="field field-button">
          <button type="submit" disabled={busy}>
            {busy ? 'Reading GitHub…' : 'Run preview'}
          </button>
        </div>
      </form>
      {error && !placed && (
        <p class="field-error" role="alert">
          {error.message}
        </p>
      )}
      {failure != null && <PreviewFailure error={failure} />}
      {result && <PreviewResult result={result} />}
    </div>
  );
}

/** Looks up the titles of the preview's contexts and the labels of its clusters (best effort). */
async function named(answer: PreviewAnswer): Promise<Shown> {
  const contextTitles = new Map<string, string>();
  const clusterLabels = new Map<string, string>();
  await Promise.all([
    ...answer.preview.contexts.map((id) =>
      apiGet<{ context: MemoryContext }>(`memory/contexts/${encodeURIComponent(id)}`).then(
        ({ context }) => void contextTitles.set(id, context.title),
        () => undefined,
      ),
    ),
    answer.preview.suppressedClusters.length === 0
      ? Promise.resolve()
      : apiGet<{ clusters: MemoryCluster[] }>('memory/clusters', {
          repo: answer.pullRequest.repo,
          limit: 100,
        }).then(
          ({ clusters }) => {
            for (const c of clusters) clusterLabels.set(c.id, c.label);
          },
          () => undefined,
        ),
  ]);
  return { ...answer, contextTitles, clusterLabels };
}

/** Why the preview could not run, in the operator's terms. */
function PreviewFailure({ error }: { error: unknown }) {
  if (error instanceof ApiError && error.code === 'app_credentials_missing') {
    return (
      <div class="state state-error preview-error" role="alert">
        <p>
          <strong>The preview needs the GitHub App's credentials.</strong> It reads the pull request, its
          changed files and the instruction files from GitHub, and this Verdict has no <code>APP_ID</code> and{' '}
          <code>PRIVATE_KEY</code>. Set both in the environment of the server that runs the operator API (or{' '}
          <code>.env</code>) and restart it; reviews need them too.
        </p>
        <p class="small">{describeError(error)}</p>
      </div>
    );
  }
  if (error instanceof ApiError && error.status === 404) {
    return (
      <div class="state state-error preview-error" role="alert">
        <p>
          <strong>Not found on GitHub.</strong> {error.message}. Check the repository and the number, and that
          the GitHub App is installed on the repository.
        </p>
      </div>
    );
  }
  if (error instanceof ApiError && error.code === 'github_unavailable') {
    return (
      <div class="state state-error preview-error" role="alert">
        <p>
          <strong>GitHub could not be read.</strong> {error.message}. Try again shortly.
        </p>
      </div>
    );
  }
  return <ErrorState error={error} />;
}

function PreviewResult({ result }: { result: Shown }) {
  const { preview, pullRequest: pr, notes } = result;
  return (
    <section class="preview" aria-label={`Preview of ${pr.repo}#${pr.number}`}>
      <h3>
        {pr.repo}#{pr.number} {pr.title}
      </h3>
      <p class="muted small">
        head <code>{pr.headSha.slice(0, 12)}</code> · base <code>{pr.baseRef}</code> · {pr.changedFiles}{' '}
        changed file{pr.changedFiles === 1 ? '' : 's'}
      </p>
      <dl class="counts preview-lists">
        <Item title="Contexts" empty="No enabled context matches a changed path." items={preview.contexts}>
          {(id) => (
            <>
              {result.contextTitles.get(id) ?? <span class="muted">(unreadable)</span>}{' '}
              <code class="small muted">{id}</code>
            </>
          )}
        </Item>
        <Item title="Knowledge" empty="No non-empty document applies." items={preview.knowledge}>
          {(path) => <code>{path}</code>}
        </Item>
        <Item title="Linked issues" empty="The description links no issue." items={preview.linkedIssues}>
          {(n) => <>#{n}</>}
        </Item>
        <Item
          title="Instruction files"
          empty="No instruction file applies to a changed path."
          items={preview.instructionFiles}
        >
          {(path) => <code>{path}</code>}
        </Item>
        <Item
          title="Suppressed clusters"
          empty="No cluster of this repository withholds findings."
          items={preview.suppressedClusters}
        >
          {(id) => (
            <>
              {result.clusterLabels.get(id) ?? <span class="muted">(label not listed)</span>}{' '}
              <code class="small muted">{id}</code>
            </>
          )}
        </Item>
      </dl>
      <LeftOut memory={result.memory} />
      {notes.length > 0 && (
        <div class="note">
          <strong>Notes</strong>
          <ul>
            {notes.map((n, i) => (
              <li key={i}>{n}</li>
            ))}
          </ul>
        </div>
      )}
    </section>
  );
}

/** What a review would not be given: trimmed by the prompt budget, or linked issues that were skipped. */
function LeftOut({ memory }: { memory: PreviewAnswer['memory'] }) {
  const { contexts, knowledge, linkedIssues } = memory.leftOut;
  const trimmed = contexts + knowledge + linkedIssues;
  return (
    <div class="note preview-left-out">
      <strong>Left out</strong>
      {trimmed === 0 ? (
        <p class="muted small">The prompt budget left nothing out.</p>
      ) : (
        <p class="small">
          The prompt budget left out {contexts} context{contexts === 1 ? '' : 's'}, {knowledge} knowledge
          document
          {knowledge === 1 ? '' : 's'} and {linkedIssues} linked issue{linkedIssues === 1 ? '' : 's'} (trimmed
          in the order docs/memory.md gives).
        </p>
      )}
      {memory.skippedIssues.length > 0 && (
        <ul class="plain small">
          {memory.skippedIssues.map((i) => (
            <li key={i.number}>
              #{i.number}: {i.reason}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function Item<T extends string | number>({
  title,
  empty,
  items,
  children,
}: {
  title: string;
  empty: string;
  items: T[];
  children: (item: T) => ComponentChildren;
}) {
  return (
    <div>
      <dt>
        {title} ({items.length})
      </dt>
      <dd>
        {items.length === 0 ? (
          <span class="muted">{empty}</span>
        ) : (
          <ul class="plain">
            {items.map((item) => (
              <li key={item}>{children(item)}</li>
            ))}
          </ul>
        )}
      </dd>
    </div>
  );
}
