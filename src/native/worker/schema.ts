import type { D1 } from './env.js';
import { ensureStateSchema } from './state-schema.js';

/**
 * The edge worker's own D1 tables (created on first use; `wrangler d1 migrations` is not needed); the
 * state tables of `state.internal` come from the Node store's migrations (state-schema.ts).
 */
const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS native_deliveries (id TEXT PRIMARY KEY, event TEXT NOT NULL, action TEXT,
    repo TEXT, pr_number INTEGER, outcome TEXT NOT NULL, bytes INTEGER NOT NULL, received_at TEXT NOT NULL,
    dispatch_outcome TEXT, dispatch_reason TEXT, attempts INTEGER NOT NULL DEFAULT 0, body TEXT, body_key TEXT)`,
  `CREATE TABLE IF NOT EXISTS native_runs (id TEXT PRIMARY KEY, review_key TEXT NOT NULL, repo TEXT NOT NULL,
    pr_number INTEGER NOT NULL, head_sha TEXT, trigger TEXT NOT NULL, status TEXT NOT NULL,
    installation_id INTEGER, delivery_id TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS native_job_runs (seq INTEGER PRIMARY KEY AUTOINCREMENT, job TEXT NOT NULL,
    ran_at TEXT NOT NULL, status TEXT NOT NULL, detail TEXT)`,
  `CREATE TABLE IF NOT EXISTS native_commands (id TEXT PRIMARY KEY, kind TEXT NOT NULL, status TEXT NOT NULL,
    error TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, payload TEXT, result TEXT)`,
  `CREATE TABLE IF NOT EXISTS native_alerts (id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL,
    scope TEXT NOT NULL, alert_key TEXT NOT NULL, repo TEXT, severity TEXT NOT NULL, message TEXT NOT NULL,
    first_seen_at TEXT NOT NULL, last_seen_at TEXT NOT NULL, count INTEGER NOT NULL,
    delivered_at TEXT, delivery_error TEXT, UNIQUE (kind, scope, alert_key))`,
];

let ready: WeakSet<object> = new WeakSet();

export async function ensureSchema(db: D1): Promise<void> {
  if (ready.has(db)) return;
  for (const sql of SCHEMA) await db.prepare(sql.replace(/\s+/g, ' ')).run();
  await ensureStateSchema(db);
  ready.add(db);
}

/** For tests that replace the database. */
export function resetSchemaCache(): void {
  ready = new WeakSet();
}
