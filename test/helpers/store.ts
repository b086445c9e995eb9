import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import knexFactory, { type Knex } from 'knex';
import { ManualClock, randomId, type Clock } from '../../src/clock.js';
import type { StoreConfig } from '../../src/config/index.js';
import { openStore, type Store } from '../../src/store/index.js';
import { migrationNames, migrationSource } from '../../src/store/migrations/index.js';

export type TestDialect = 'sqlite' | 'pg';

export function testDatabaseUrl(): string {
  return (
    process.env.TEST_DATABASE_URL || process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test'
  );
}

/** A fresh store: a new SQLite file in a temp dir, or a new schema in the PostgreSQL test database. */
export async function makeStoreConfig(
  dialect: TestDialect,
): Promise<{ config: StoreConfig; cleanup(): Promise<void> }> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'verdict-test-'));
    return {
      config: { client: 'sqlite', filename: join(dir, 'verdict.sqlite') },
      cleanup: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const url = testDatabaseUrl();
  return {
    config: { client: 'pg', connectionString: url, poolMax: 10, schema },
    cleanup: async () => {
      const k = knexFactory({ client: 'pg', connection: url });
      await k.raw('DROP SCHEMA IF EXISTS ?? CASCADE', [schema]);
      await k.destroy();
    },
  };
}

export type TestStore = { store: Store; clock: ManualClock; config: StoreConfig; cleanup(): Promise<void> };

export async function openTestStore(
  dialect: TestDialect,
  clock: ManualClock = new ManualClock(),
): Promise<TestStore> {
  const { config, cleanup } = await makeStoreConfig(dialect);
  const store = await openStore(config, { clock: clock as Clock, ids: randomId, dedupeTtlSeconds: 604800 });
  return {
    store,
    clock,
    config,
    cleanup: async () => {
      await store.close();
      await cleanup();
    },
  };
}

/**
 * Rolls the store's migrations back, newest first, until `name` is the latest applied: the tests of one
 * migration's `down` keep working when later migrations are added.
 */
export async function migrateDownTo(knex: Knex, name: string): Promise<void> {
  const index = migrationNames.indexOf(name);
  if (index < 0) throw new Error(`no migration ${name}`);
  for (let i = index + 1; i < migrationNames.length; i++) await knex.migrate.down({ migrationSource });
}
