import type { Knex } from 'knex';

/**
 * New webhook payloads on SQLite are compressed with LZ4 instead of Brotli: `deliveries.payload_codec`
 * says how `payload_z` is compressed, `lz4` (an LZ4 block with its size before it, as lz4-napi writes
 * it) or null for Brotli (the rows of migration 014). LZ4 compresses the 21 KB `pull_request.opened`
 * example to 2.7 KB (Brotli quality 1: 2 KB) in under half of Brotli's time, and either row takes one
 * 4 KB page. Compression was the largest part of the writer thread's work (docs/decisions.md).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('deliveries', (t) => {
    t.string('payload_codec', 16).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  // LZ4 payloads become Brotli again (what migration 014 reads) before the column goes, 500 at a time.
  const { brotliCompressSync, constants } = await import('node:zlib');
  const { uncompressSync } = await import('lz4-napi');
  for (;;) {
    const rows: Array<{ id: string; payload_z: Uint8Array }> = await knex('deliveries')
      .where({ payload_codec: 'lz4' })
      .limit(500)
      .select('id', 'payload_z');
    if (rows.length === 0) break;
    for (const row of rows) {
      const text = uncompressSync(Buffer.from(row.payload_z));
      const brotli = brotliCompressSync(text, { params: { [constants.BROTLI_PARAM_QUALITY]: 1 } });
      await knex('deliveries').where({ id: row.id }).update({ payload_z: brotli, payload_codec: null });
    }
  }
  await knex.schema.alterTable('deliveries', (t) => {
    t.dropColumn('payload_codec');
  });
}
