import { readFileSync } from 'node:fs';
import pino from 'pino';
import type { Config } from '../config/index.js';
import { memoryOperations } from '../services/memory.js';
import { OperatorError, runLocally, type OperationContext } from '../services/operation.js';
import { CliError, type Print } from './io.js';
import type { Options } from './options.js';
import { MEMORY_SUBCOMMAND_HELP } from './memory-help.js';
import { table, type Painter } from './table.js';

/**
 * `verdict memory ...`: the memory services of the operator API (src/services/memory.ts) run locally on
 * the store, as the local operator (`cli:$USER`). A write without `--revision` reads the current revision
 * first, so it still fails when the record changes between that read and the write.
 */

const ops = memoryOperations;

/** A whole decimal number for a flag, or a refusal naming it. */
function integerFlag(raw: string | undefined, flag: string): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d{1,15}$/.test(raw)) throw new CliError(`${flag} must be a whole number (got "${raw}")`);
  return Number(raw);
}

function onlyFlag(values: string[] | undefined, flag: string): string | undefined {
  if (!values || values.length === 0) return undefined;
  if (values.length > 1) throw new CliError(`${flag} is given more than once`);
  return values[0];
}

const shortTime = (iso: string) => iso.replace('T', ' ').slice(0, 19);
const truncate = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

type ContextOut = Awaited<ReturnType<typeof ops.context.run>>['context'];
type ClusterOut = Awaited<ReturnType<typeof ops.createCluster.run>>['cluster'];

function contextText(c: ContextOut, paint: Painter): string {
  const field = (label: string, value: string) => `${paint(label.padEnd(10), 'bold')} ${value}`;
  return [
    field('id', c.id),
    field('repo', c.repo ?? '(every repository)'),
    field('paths', c.paths.length === 0 ? '(every path)' : c.paths.join(', ')),
    field('enabled', c.enabled ? 'yes' : 'no'),
    field('source', c.source),
    field('revision', String(c.revision)),
    field('created', `${shortTime(c.createdAt)} by ${c.createdBy}`),
    field('updated', shortTime(c.updatedAt)),
    field('title', c.title),
    '',
    c.body,
  ].join('\n');
}

function clusterLine(c: ClusterOut): string {
  return `cluster ${c.id} (${c.repo}, action ${c.action}, revision ${c.revision})`;
}

/** What a subcommand is given: the flags, the operation context and the output. */
type Call = {
  opts: Options;
  path: string[] | undefined;
  ctx: OperationContext;
  config: Config;
  paint: Painter;
  print: Print;
  /** The one positional argument (or none when `n` is 0), refusing any other count. */
  takes: (n: number, what: string) => string;
};

/** The revision a write names: `--revision`, else the current one. */
const revisionOf = async (explicit: string | undefined, current: () => Promise<number>) =>
  integerFlag(explicit, '--revision') ?? (await current());

const contextRevision = async (ctx: OperationContext, id: string) =>
  (await runLocally(ops.context, ctx, { id })).context.revision;

async function clusterRevision(ctx: OperationContext, id: string): Promise<number> {
  const cluster = await ctx.store.memory.getCluster(id);
  if (!cluster) throw new CliError(`no memory cluster ${id}`);
  return cluster.revision;
}

async function listContexts({ opts, ctx, paint, print, takes }: Call): Promise<void> {
  takes(0, '');
  const out = await runLocally(ops.contexts, ctx, {
    repo: opts.repo,
    q: opts.search,
    limit: opts.limit,
  });
  print(out, () =>
    out.contexts.length === 0
      ? 'no contexts'
      : table(
          ['ID', 'REPO', 'PATHS', 'ON', 'REV', 'TITLE'],
          out.contexts.map((c) => [
            c.id,
            c.repo ?? '*',
            c.paths.length === 0 ? '*' : truncate(c.paths.join(','), 40),
            c.enabled ? 'yes' : 'no',
            String(c.revision),
            truncate(c.title, 60),
          ]),
          paint,
        ),
  );
}

async function showContext({ ctx, paint, print, takes }: Call): Promise<void> {
  const out = await runLocally(ops.context, ctx, { id: takes(1, 'context id') });
  print(out, () => contextText(out.context, paint));
}

async function addContext({ opts, ctx, paint, print, takes, path }: Call): Promise<void> {
  takes(0, '');
  if (opts.enable) throw new CliError('a new context is enabled unless --disable is given');
  const out = await runLocally(ops.createContext, ctx, {
    ...(opts.repo !== undefined ? { repo: opts.repo } : {}),
    ...(path ? { paths: path } : {}),
    title: opts.title,
    body: opts.body,
    ...(opts.disable ? { enabled: false } : {}),
  });
  print(out, () => `${paint('created', 'green')} context ${out.context.id} (revision 1)`);
}

async function editContext({ opts, ctx, paint, print, takes, path }: Call): Promise<void> {
  const id = takes(1, 'context id');
  if (opts.enable && opts.disable) throw new CliError('give --enable or --disable, not both');
  if (opts.workspace && opts.repo !== undefined) throw new CliError('give --repo or --workspace, not both');
  if (opts['all-paths'] && path) throw new CliError('give --path or --all-paths, not both');
  const revision = await revisionOf(opts.revision, () => contextRevision(ctx, id));
  const body: Record<string, unknown> = { revision };
  if (opts.title !== undefined) body.title = opts.title;
  if (opts.body !== undefined) body.body = opts.body;
  if (opts.repo !== undefined) body.repo = opts.repo;
  if (opts.workspace) body.repo = null;
  if (path) body.paths = path;
  if (opts['all-paths']) body.paths = [];
  if (opts.enable) body.enabled = true;
  if (opts.disable) body.enabled = false;
  if (Object.keys(body).length === 1)
    throw new CliError('nothing to change (run verdict memory edit-context --help)');
  const out = await runLocally(ops.updateContext, ctx, { id, body });
  print(out, () => `${paint('updated', 'green')} context ${id} (revision ${out.context.revision})`);
}

async function removeContext({ opts, ctx, paint, print, takes }: Call): Promise<void> {
  const id = takes(1, 'context id');
  const revision = await revisionOf(opts.revision, () => contextRevision(ctx, id));
  const out = await runLocally(ops.deleteContext, ctx, { id, body: { revision } });
  print(out, () => `${paint('deleted', 'green')} context ${id}`);
}

async function listClusters({ opts, ctx, paint, print, takes }: Call): Promise<void> {
  takes(0, '');
  const out = await runLocally(ops.clusters, ctx, { repo: opts.repo, limit: opts.limit });
  print(out, () =>
    out.clusters.length === 0
      ? 'no clusters'
      : table(
          ['ID', 'REPO', 'ACTION', 'SIZE', 'UP', 'DOWN', 'DISMISSED', 'ADDRESSED', 'LABEL'],
          out.clusters.map((c) => [
            c.id,
            c.repo,
            c.action,
            String(c.size),
            String(c.feedback.up),
            String(c.feedback.down),
            String(c.feedback.dismissed),
            String(c.feedback.addressed),
            truncate(c.label, 60),
          ]),
          paint,
          (column, value) => (column === 2 && value === 'suppress' ? 'yellow' : null),
        ),
  );
}

async function addCluster({ opts, ctx, paint, print, takes, path }: Call): Promise<void> {
  takes(0, '');
  const out = await runLocally(ops.createCluster, ctx, {
    repo: opts.repo,
    label: opts.label,
    exemplar: {
      title: opts.title,
      body: opts.body,
      ...(opts.category !== undefined ? { category: opts.category } : {}),
      ...(path ? { path: onlyFlag(path, '--path') } : {}),
    },
    ...(opts.action !== undefined ? { action: opts.action } : {}),
  });
  print(out, () => `${paint('created', 'green')} ${clusterLine(out.cluster)}`);
}

async function setCluster({ opts, ctx, paint, print, takes }: Call): Promise<void> {
  const id = takes(1, 'cluster id');
  const body: Record<string, unknown> = {};
  if (opts.action !== undefined) body.action = opts.action;
  if (opts.label !== undefined) body.label = opts.label;
  if (Object.keys(body).length === 0) throw new CliError('nothing to change: give --action or --label');
  body.revision = await revisionOf(opts.revision, () => clusterRevision(ctx, id));
  const out = await runLocally(ops.updateCluster, ctx, { id, body });
  print(out, () => `${paint('updated', 'green')} ${clusterLine(out.cluster)}`);
}

async function removeCluster({ opts, ctx, paint, print, takes }: Call): Promise<void> {
  const id = takes(1, 'cluster id');
  const revision = await revisionOf(opts.revision, () => clusterRevision(ctx, id));
  const out = await runLocally(ops.deleteCluster, ctx, { id, body: { revision } });
  print(out, () => `${paint('deleted', 'green')} cluster ${id}`);
}

async function listKnowledge({ opts, ctx, paint, print, takes }: Call): Promise<void> {
  takes(0, '');
  const out = await runLocally(ops.knowledge, ctx, { repo: opts.repo, limit: opts.limit });
  print(out, () =>
    out.documents.length === 0
      ? 'no knowledge documents'
      : table(
          ['REPO', 'PATH', 'BYTES', 'REV', 'UPDATED (UTC)', 'TITLE'],
          out.documents.map((d) => [
            d.repo,
            d.path,
            String(d.bytes),
            String(d.revision),
            shortTime(d.updatedAt),
            truncate(d.title, 60),
          ]),
          paint,
        ),
  );
}

async function showKnowledge({ opts, ctx, paint, print, takes, path }: Call): Promise<void> {
  takes(0, '');
  const out = await runLocally(ops.knowledgeDocument, ctx, {
    repo: opts.repo,
    path: onlyFlag(path, '--path'),
  });
  if (!out.document) throw new CliError(`no knowledge document at ${opts.repo} ${onlyFlag(path, '--path')}`);
  const d = out.document;
  print(out, () =>
    [
      `${paint(d.title, 'bold')} (${d.repo} ${d.path}, revision ${d.revision}, ${shortTime(d.updatedAt)})`,
      '',
      d.body,
    ].join('\n'),
  );
}

async function putKnowledge({ opts, ctx, paint, print, takes, path }: Call): Promise<void> {
  takes(0, '');
  if (opts.body !== undefined && opts['body-file'] !== undefined) {
    throw new CliError('give --body or --body-file, not both');
  }
  let body = opts.body;
  if (opts['body-file'] !== undefined) {
    try {
      body = readFileSync(opts['body-file'], 'utf8');
    } catch (error) {
      throw new CliError(`cannot read ${opts['body-file']}: ${(error as Error).message}`);
    }
  }
  if (body === undefined) throw new CliError('needs --body or --body-file');
  const docPath = onlyFlag(path, '--path');
  let revision = integerFlag(opts.revision, '--revision');
  if (revision === undefined && opts.repo !== undefined && docPath !== undefined) {
    // Replacing without --revision: the current one (none for a new document).
    try {
      revision = (await runLocally(ops.knowledgeDocument, ctx, { repo: opts.repo, path: docPath })).document
        ?.revision;
    } catch (error) {
      if (!(error instanceof OperatorError)) throw error;
    }
  }
  const out = await runLocally(ops.putKnowledgeDocument, ctx, {
    repo: opts.repo,
    path: docPath,
    body,
    ...(opts.title !== undefined ? { title: opts.title } : {}),
    ...(revision !== undefined ? { revision } : {}),
  });
  const d = out.document;
  print(out, () => `${paint('saved', 'green')} knowledge ${d.repo} ${d.path} (revision ${d.revision})`);
}

async function listIntegrations({ ctx, config, paint, print, takes }: Call): Promise<void> {
  takes(0, '');
  const github = await cliGitHub(ctx, config);
  const out = await runLocally(ops.integrations, { ...ctx, github }, {});
  print(out, () =>
    table(
      ['ID', 'ON', 'DESCRIPTION'],
      out.integrations.map((i) => [i.id, i.enabled ? 'yes' : 'no', i.description]),
      paint,
      (column, value) => (column === 1 ? (value === 'yes' ? 'green' : 'yellow') : null),
    ),
  );
}

async function previewIntegration({ opts, ctx, config, paint, print, takes }: Call): Promise<void> {
  takes(0, '');
  const number = integerFlag(opts.number, '--number');
  const github = await cliGitHub(ctx, config);
  const out = await runLocally(ops.previewIntegration, { ...ctx, github }, { repo: opts.repo, number });
  const p = out.preview;
  const list = (items: Array<string | number>) => (items.length === 0 ? '(none)' : items.join(', '));
  print(out, () =>
    [
      paint(`${out.pullRequest.repo}#${out.pullRequest.number} ${out.pullRequest.title}`, 'bold'),
      `head ${out.pullRequest.headSha.slice(0, 12)} on ${out.pullRequest.baseRef}, ${out.pullRequest.changedFiles} changed file(s)`,
      `contexts            ${list(p.contexts)}`,
      `knowledge           ${list(p.knowledge)}`,
      `linked issues       ${list(p.linkedIssues.map((n) => `#${n}`))}`,
      `instruction files   ${list(p.instructionFiles)}`,
      `suppressed clusters ${list(p.suppressedClusters)}`,
      ...out.notes.map((n) => paint(`note: ${n}`, 'yellow')),
      ...memoryNotes(out.memory).map((n) => paint(`note: ${n}`, 'yellow')),
    ].join('\n'),
  );
}

const SUBCOMMANDS: Record<string, (call: Call) => Promise<void>> = {
  contexts: listContexts,
  context: showContext,
  'add-context': addContext,
  'edit-context': editContext,
  'rm-context': removeContext,
  clusters: listClusters,
  'add-cluster': addCluster,
  'set-cluster': setCluster,
  'rm-cluster': removeCluster,
  knowledge: listKnowledge,
  'show-knowledge': showKnowledge,
  'put-knowledge': putKnowledge,
  integrations: listIntegrations,
  preview: previewIntegration,
};

/** Runs `verdict memory <sub> ...`; resolves with the exit code. */
export async function memoryCommand(
  args: string[],
  opts: Options,
  ctx: OperationContext,
  config: Config,
  paint: Painter,
  print: Print,
): Promise<number> {
  const [sub, ...rest] = args;
  if (!sub) throw new CliError('needs a subcommand (run verdict memory --help)');
  if (!(sub in MEMORY_SUBCOMMAND_HELP)) {
    throw new CliError(`unknown subcommand "${sub}" (run verdict memory --help)`);
  }
  const takes = (n: number, what: string) => {
    if (rest.length !== n) {
      throw new CliError(n === 0 ? `${sub} takes no arguments` : `${sub} needs exactly one ${what}`);
    }
    return rest[0]!;
  };
  const run = Object.hasOwn(SUBCOMMANDS, sub) ? SUBCOMMANDS[sub] : undefined;
  if (!run) throw new CliError(`unknown subcommand "${sub}"`);
  await run({ opts, path: opts.path, ctx, config, paint, print, takes });
  return 0;
}

/** What the preview's memory selection left out or skipped, as notes (none when it gave everything). */
function memoryNotes(memory: {
  leftOut: { contexts: number; knowledge: number; linkedIssues: number };
  skippedIssues: Array<{ number: number; reason: string }>;
}): string[] {
  const { contexts, knowledge, linkedIssues } = memory.leftOut;
  const left = [
    contexts > 0 ? `${contexts} context(s)` : null,
    knowledge > 0 ? `${knowledge} knowledge document(s)` : null,
    linkedIssues > 0 ? `${linkedIssues} linked issue(s)` : null,
  ].filter((x) => x !== null);
  return [
    ...(left.length > 0 ? [`left out by the caps and budgets: ${left.join(', ')}`] : []),
    ...memory.skippedIssues.map((i) => `#${i.number} not given: ${i.reason}`),
  ];
}

/** GitHub through the App's credentials, as the server composes it (null without them: the preview refuses). */
async function cliGitHub(ctx: OperationContext, config: Config) {
  if (!config.github.hasCredentials) return null;
  const [{ createProbot }, { repositoryGitHubFor }] = await Promise.all([
    import('../github/probot.js'),
    import('../compose/parts.js'),
  ]);
  const probot = createProbot(config.github, pino({ level: 'silent' }));
  return repositoryGitHubFor(probot, ctx.store, config);
}
