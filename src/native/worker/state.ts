/**
 * The outer worker's side of the container's internal hosts (review-engine 4.2): `state.internal`
 * (`/bundle`: the rows a run's review reads; `/flush`: the rows it wrote, in one D1 transaction) and
 * `broker.internal` (`/token`: an installation token, minted here so the App key never enters the
 * container). Every call names the run and its dispatch lease token; a token that is no longer the run's
 * lease owner is refused with 409 `lease_lost` and nothing is written.
 */
import type { z } from 'zod';
import {
  brokerTokenRequestSchema,
  NATIVE_STATE_TABLES,
  stateBundleRequestSchema,
  stateFlushSchema,
  type InternalHost,
  type StateBundle,
  type StateTable,
} from '../protocol.js';
import type { Env } from './env.js';
import { installationToken } from './github.js';
import { json } from './ingress.js';
import { leasedRun, parse, refuse, type NativeRun } from './internal-call.js';
import { sandboxRun } from './sandbox.js';
import { ensureSchema } from './schema.js';
import { insertRow, quoteName, STATE_SCHEMA } from './state-schema.js';

function scoped(table: StateTable, run: NativeRun): { sql: string; binds: unknown[] } {
  const from = `SELECT * FROM ${quoteName(table.table)}`;
  if (table.scope === 'pr')
    return {
      sql: `${from} WHERE ${quoteName(table.repoColumn!)} = ? AND ${quoteName(table.prColumn!)} = ?`,
      binds: [run.repo, run.pr_number],
    };
  if (table.scope === 'repo')
    return { sql: `${from} WHERE lower(${quoteName(table.repoColumn!)}) = lower(?)`, binds: [run.repo] };
  return { sql: from, binds: [] };
}

async function bundle(request: Request, env: Env): Promise<Response> {
  const body = await parse(request, stateBundleRequestSchema);
  if (body instanceof Response) return body;
  const run = await leasedRun(env, body);
  if (run instanceof Response) return run;
  const tables: StateBundle['tables'] = {};
  for (const table of NATIVE_STATE_TABLES) {
    if (table.scope === 'write') continue;
    const { sql, binds } = scoped(table, run);
    tables[table.table] = (
      await env.DB.prepare(sql)
        .bind(...binds)
        .all<Record<string, unknown>>()
    ).results;
  }
  return json(200, { tables });
}

/** Tables and columns of a flush checked against the contract and the schema before anything is written. */
function flushStatements(
  env: Env,
  flush: z.infer<typeof stateFlushSchema>,
): ReturnType<Env['DB']['prepare']>[] {
  const statements = [];
  for (const [name, change] of Object.entries(flush.tables)) {
    const table = NATIVE_STATE_TABLES.find((t) => t.table === name);
    const columns = new Set(STATE_SCHEMA?.columns[name] ?? []);
    if (!table) throw new RangeError(`table ${name} is outside the state contract`);
    for (const row of [...change.upsert, ...change.insert]) {
      const unknown = Object.keys(row).filter((c) => !columns.has(c));
      if (unknown.length > 0) throw new RangeError(`${name} has no column ${unknown.join(', ')}`);
    }
    for (const row of change.upsert) statements.push(insertRow(env.DB, name, row, 'upsert'));
    for (const row of change.insert) {
      const fresh = { ...row };
      if (table.generated) for (const k of table.key) delete fresh[k];
      statements.push(insertRow(env.DB, name, fresh, 'insert', table.eventKey));
    }
  }
  return statements;
}

async function flush(request: Request, env: Env): Promise<Response> {
  const body = await parse(request, stateFlushSchema);
  if (body instanceof Response) return body;
  const run = await leasedRun(env, body);
  if (run instanceof Response) return run;
  let statements;
  try {
    statements = flushStatements(env, body);
  } catch (err) {
    return refuse(400, 'invalid_flush', (err as Error).message);
  }
  try {
    if (statements.length > 0) await env.DB.batch(statements);
  } catch (err) {
    // D1 rolled the whole batch back (a constraint refused a row): nothing of this flush is written.
    return refuse(500, 'state_write_failed', (err as Error).message);
  }
  const rows = statements.length;
  console.log(JSON.stringify({ event: 'state-flushed', runId: run.id, final: body.final, rows }));
  return json(200, { ok: true, rows });
}

async function token(request: Request, env: Env): Promise<Response> {
  const body = await parse(request, brokerTokenRequestSchema);
  if (body instanceof Response) return body;
  const run = await leasedRun(env, body);
  if (run instanceof Response) return run;
  if (run.installation_id !== body.installationId)
    return refuse(
      403,
      'installation_mismatch',
      `run ${run.id} belongs to installation ${run.installation_id}`,
    );
  try {
    return json(200, await installationToken(env, body.installationId));
  } catch (err) {
    return refuse(502, 'token_failed', (err as Error).message);
  }
}

/** Answers one request the container sent to an internal host. */
export async function handleInternal(host: InternalHost, request: Request, env: Env): Promise<Response> {
  if (request.method !== 'POST') return refuse(405, 'method_not_allowed', 'internal hosts take POST');
  await ensureSchema(env.DB);
  const path = new URL(request.url).pathname;
  if (host === 'state.internal' && path === '/bundle') return bundle(request, env);
  if (host === 'state.internal' && path === '/flush') return flush(request, env);
  if (host === 'broker.internal' && path === '/token') return token(request, env);
  if (host === 'sandbox.internal' && path === '/run') return sandboxRun(request, env);
  return refuse(404, 'not_found', `${host}${path} is not served`);
}
