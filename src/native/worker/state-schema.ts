import type { D1, D1Statement } from './env.js';

/** The D1 side of `state.internal`: the Node store's tables of NATIVE_STATE_TABLES (scripts/native-build.ts). */
export type StateSchema = {
  /** CREATE TABLE / CREATE INDEX statements of the migrated store, each `IF NOT EXISTS`. */
  ddl: string[];
  columns: Record<string, string[]>;
  /** Rows the migrations seed (the default review policy). */
  seeds: Record<string, Array<Record<string, unknown>>>;
};

declare const __VERDICT_STATE_SCHEMA__: StateSchema | undefined;

/** Compiled into the bundle by the build; absent when this module runs unbundled. */
export const STATE_SCHEMA: StateSchema | null =
  typeof __VERDICT_STATE_SCHEMA__ === 'undefined' ? null : __VERDICT_STATE_SCHEMA__;

export const quoteName = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** D1 binds strings, numbers and null; a boolean is SQLite's 0 or 1. */
export function sqlValue(value: unknown): string | number | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'string' || typeof value === 'number') return value;
  throw new Error(`a state value must be a string, number, boolean or null (got ${typeof value})`);
}

/** `INSERT` of one row; `upsert` updates the row a unique key of the table already holds. */
export function insertRow(
  db: D1,
  table: string,
  row: Record<string, unknown>,
  mode: 'insert' | 'upsert' | 'ignore',
  /** With `insert`: a row this unique key holds already is left as it is (nothing written, no error). */
  skipOn?: string,
): D1Statement {
  const cols = Object.keys(row);
  const names = cols.map(quoteName).join(', ');
  const marks = cols.map(() => '?').join(', ');
  const verb = mode === 'ignore' ? 'INSERT OR IGNORE' : 'INSERT';
  const tail =
    mode === 'upsert' && cols.length > 0
      ? ` ON CONFLICT DO UPDATE SET ${cols.map((c) => `${quoteName(c)} = excluded.${quoteName(c)}`).join(', ')}`
      : skipOn
        ? ` ON CONFLICT (${quoteName(skipOn)}) DO NOTHING`
        : '';
  return db
    .prepare(`${verb} INTO ${quoteName(table)} (${names}) VALUES (${marks})${tail}`)
    .bind(...cols.map((c) => sqlValue(row[c])));
}

/** The state schema compiled into the bundle; an error when the worker was built without it. */
export function stateSchema(): StateSchema {
  if (!STATE_SCHEMA) throw new Error('the worker was built without its state schema (npm run native:build)');
  return STATE_SCHEMA;
}

/** The seeded rows of the state tables, each inserted unless its key is there (idempotent). */
export function seedStatements(db: D1): D1Statement[] {
  return Object.entries(stateSchema().seeds).flatMap(([table, rows]) =>
    rows.map((row) => insertRow(db, table, row, 'ignore')),
  );
}
