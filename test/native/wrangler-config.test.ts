/**
 * The shape of wrangler.jsonc (the deployment's bindings and the settings of review-engine 6.4 and 8), and
 * `wrangler deploy --dry-run` over it (no account needed).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { buildWorker } from '../../scripts/native-build.js';
import { CRON_JOBS } from '../../src/native/worker/scheduled.js';

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
    expect(config.containers[1]).toMatchObject({
      class_name: 'ValidationSandbox',
      image: './src/native/sandbox/Dockerfile',
    });
    expect(classes).toContain('ValidationSandbox');
    expect(config.triggers.crons.sort()).toEqual(
      ['* * * * *', '2-59/15 * * * *', '3-59/15 * * * *', '30 22 * * *', '30 23 * * *'].sort(),
    );
    // The worker runs a job for each of them, and only for them.
    expect(Object.keys(CRON_JOBS).sort()).toEqual([...config.triggers.crons].sort());
  });

  it('passes `wrangler deploy --dry-run` with the worker bundle and every binding', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'verdict-wrangler-'));
    try {
      const main = await buildWorker(join(dir, 'worker.mjs'));
      // Building the container image needs Docker (not on this machine): the dry run names a pushed
      // image instead of the Dockerfile; everything else is wrangler.jsonc as it is.
      const dry = {
        ...config,
        main,
        containers: config.containers.map((c: any) => ({
          ...c,
          image: `registry.cloudflare.com/verdict/${c.class_name.toLowerCase()}:dry-run`,
        })),
      };
      delete dry.$schema;
      writeFileSync(join(dir, 'wrangler.json'), JSON.stringify(dry));
      const wrangler = fileURLToPath(new URL('../../node_modules/.bin/wrangler', import.meta.url));
      const { stdout } = await promisify(execFile)(
        wrangler,
        ['deploy', '--dry-run', '--outdir', join(dir, 'out'), '--config', join(dir, 'wrangler.json')],
        { env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: 'true', HOME: dir }, timeout: 120_000 },
      );
      for (const binding of [
        'env.LEASES (DispatchLease)',
        'env.REVIEW_CONTAINERS (ReviewContainer)',
        'env.VALIDATION_SANDBOXES (ValidationSandbox)',
        'env.DELIVERIES',
        'env.REVIEW_QUEUE',
        'env.DB',
        'env.PAYLOADS',
      ])
        expect(stdout).toContain(binding);
      expect(stdout).toContain('--dry-run: exiting now.');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
