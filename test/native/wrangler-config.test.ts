/**
 * The shape of wrangler.jsonc (the deployment's bindings and the settings of review-engine 6.4 and 8).
 * `wrangler deploy --dry-run` is not run here: wrangler is not a dependency yet (docs/native.md).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const text = readFileSync(fileURLToPath(new URL('../../wrangler.jsonc', import.meta.url)), 'utf8');
// JSONC: whole-line comments and trailing commas only in this file.
const config = JSON.parse(text.replace(/^\s*\/\/.*$/gm, '').replace(/,(\s*[}\]])/g, '$1'));

describe('wrangler.jsonc', () => {
  it('binds KV, R2, D1 and the queue producer and consumer with the settings of 8', () => {
    expect(config.compatibility_flags).toContain('nodejs_compat');
    expect(config.kv_namespaces.map((k: any) => k.binding)).toEqual(['DELIVERIES']);
    expect(config.r2_buckets.map((k: any) => k.binding)).toEqual(['PAYLOADS']);
    expect(config.d1_databases.map((k: any) => k.binding)).toEqual(['DB']);
    expect(config.queues.producers).toEqual([{ binding: 'REVIEW_QUEUE', queue: 'verdict-reviews' }]);
    expect(config.queues.consumers[0]).toMatchObject({
      queue: 'verdict-reviews',
      max_batch_size: 1,
      max_batch_timeout: 5,
      max_retries: 8,
    });
    expect(config.vars).toMatchObject({
      DEDUPE_TTL_SECONDS: '604800',
      MAX_ATTEMPTS: '8',
      LEASE_MS: '1800000',
    });
    expect(config.vars.VERDICT_PUBLISH_MODE).toBe('live');
  });

  it('declares the lease Durable Object with its migration, the container and the four schedules of 6.4', () => {
    const classes = config.durable_objects.bindings.map((b: any) => b.class_name);
    expect(classes).toEqual(expect.arrayContaining(['DispatchLease', 'ReviewContainer']));
    const migrated = config.migrations.flatMap((m: any) => m.new_sqlite_classes);
    expect(migrated).toEqual(expect.arrayContaining(classes));
    expect(config.containers[0]).toMatchObject({ class_name: 'ReviewContainer', max_instances: 20 });
    expect(config.triggers.crons.sort()).toEqual(
      ['* * * * *', '2-59/15 * * * *', '3-59/15 * * * *', '30 22 * * *', '30 23 * * *'].sort(),
    );
  });
});
