import type { Store } from '../../src/store/index.js';

/**
 * Makes inserts into a table fail for rows whose `column` contains `marker`, with a real database
 * trigger (no test-only code path in the product). Returns a function that removes the trigger.
 */
export async function failInsertsWhere(
  store: Store,
  table: string,
  column: string,
  marker: string,
): Promise<() => Promise<void>> {
  const knex = store.db.knex;
  const name = `fail_${table}_${Math.random().toString(36).slice(2, 8)}`;
  if (store.db.dialect === 'sqlite') {
    await knex.raw(
      `CREATE TRIGGER ${name} BEFORE INSERT ON ${table} WHEN NEW.${column} LIKE '%${marker}%' BEGIN SELECT RAISE(ABORT, 'injected failure'); END`,
    );
    return async () => void (await knex.raw(`DROP TRIGGER IF EXISTS ${name}`));
  }
  await knex.raw(`CREATE FUNCTION ${name}() RETURNS trigger AS $$ BEGIN
      IF NEW.${column}::text LIKE '%${marker}%' THEN RAISE EXCEPTION 'injected failure'; END IF;
      RETURN NEW; END; $$ LANGUAGE plpgsql`);
  await knex.raw(`CREATE TRIGGER ${name} BEFORE INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION ${name}()`);
  return async () => {
    await knex.raw(`DROP TRIGGER IF EXISTS ${name} ON ${table}`);
    await knex.raw(`DROP FUNCTION IF EXISTS ${name}()`);
  };
}
