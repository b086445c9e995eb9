import type { Knex } from 'knex';

/**
 * Webhook payloads compressed on SQLite: `deliveries.payload_z` holds the payload compressed with Brotli
 * (by the writer thread; LZ4 since migration 015, which marks those rows), and `payload` is then ''.
 * A payload is about 10x smaller compressed, so the ingress writes a tenth of the bytes to the WAL and
 * the database file. Rows written before (and every row on PostgreSQL, which compresses large values
 * itself) keep the text in `payload` and null here.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('deliveries', (t) => {
    t.binary('payload_z').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  // Compressed payloads go back to text before the column goes, 500 rows at a time.
  const { brotliDecompressSync } = await import('node:zlib');
  for (;;) {
    const rows: Array<{ id: string; payload_z: Uint8Array }> = await knex('deliveries')
      .whereNotNull('payload_z')
      .limit(500)
      .select('id', 'payload_z');
    if (rows.length === 0) break;
    for (const row of rows) {
      await knex('deliveries')
        .where({ id: row.id })
        .update({ payload: brotliDecompressSync(row.payload_z).toString('utf8'), payload_z: null });
    }
  }
  await knex.schema.alterTable('deliveries', (t) => {
    t.dropColumn('payload_z');
  });
}
