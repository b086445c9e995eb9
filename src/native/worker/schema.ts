import type { D1 } from './env.js';
import { addMissingColumns, tableColumns, type TableColumns } from './schema-upgrade.js';
import { seedStatements, stateSchema } from './state-schema.js';

/**
 * The edge worker's own D1 tables (created on first use; `wrangler d1 migrations` is not needed); the
 * state tables of `state.internal` come from the Node store's migrations (state-schema.ts). A column
 * added here or by a migration reaches a database an earlier build created (schema-upgrade.ts).
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

const ready: WeakSet<object> = new WeakSet();

/**
 * Once per isolate and database: the tables created where missing, the columns they lack added (rows
 * kept), then the indexes and the seeded rows; every step idempotent. Three D1 round trips when nothing
 * is missing (the creations, the table infos, the indexes and seeds).
 */
export async function ensureSchema(db: D1): Promise<void> {
  if (ready.has(db)) return;
  const statements = [...SCHEMA.map((sql) => sql.replace(/\s+/g, ' ')), ...stateSchema().ddl];
  const tables: string[] = [];
  const others: string[] = [];
  for (const sql of statements) (tableColumns(sql) ? tables : others).push(sql);
  await db.batch(tables.map((sql) => db.prepare(sql)));
  const added = await addMissingColumns(
    db,
    tables.map((sql) => tableColumns(sql) as TableColumns),
  );
  if (added.length > 0) console.log(JSON.stringify({ event: 'schema-upgraded', added }));
  await db.batch([...others.map((sql) => db.prepare(sql)), ...seedStatements(db)]);
  ready.add(db);
}
