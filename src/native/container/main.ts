import { createLogger } from '../../logger.js';
import { nativeConfig, nativePublishMode, startupGuard } from './env.js';
import { internalClient } from './internal.js';
import { ContainerService } from './service.js';

/**
 * The review container of the native runtime (review-engine 4.2, docs/native.md "Review container"): the
 * startup guard of 5.5, then the HTTP service on `PORT` (default 8080). SIGTERM (the termination abort)
 * stops it: no new review, the running one aborted and checkpointed, the process gone within 10 s.
 * `VERDICT_CONTAINER_PHASE_LOG_MS` shortens the 30 s phase log for tests.
 */
async function main(): Promise<void> {
  const env = process.env;
  const guard = startupGuard(env);
  if (guard) {
    console.error(guard);
    process.exit(1);
  }
  const config = nativeConfig(env);
  const log = createLogger(config.logLevel, undefined, config.logFormat).child({ name: 'container' });
  const maxAttempts = Number.parseInt(env.MAX_ATTEMPTS ?? '', 10);
  const phaseLogMs = Number.parseInt(env.VERDICT_CONTAINER_PHASE_LOG_MS ?? '', 10);
  const service = new ContainerService({
    config,
    log,
    internal: internalClient(
      env.VERDICT_INTERNAL_ORIGIN?.trim() || null,
      env.VERDICT_INTERNAL_TOKEN?.trim() || null,
    ),
    publishMode: nativePublishMode(env),
    maxAttempts: Number.isInteger(maxAttempts) && maxAttempts > 0 ? maxAttempts : 8,
    // Forwarded only as `1` (review-engine 8, src/native/forwarding.ts).
    sandboxEnabled: env.VERDICT_CF_SANDBOX_ENABLED === '1',
    ...(Number.isInteger(phaseLogMs) && phaseLogMs > 0 ? { phaseLogMs } : {}),
  });
  const port = await service.listen(Number.parseInt(env.PORT ?? '', 10) || 8080);
  log.info(
    { event: 'container-started', port, publishMode: nativePublishMode(env) },
    `review container listening on ${port}`,
  );
  let stopping = false;
  const terminate = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ event: 'container-stopping', signal }, 'termination abort: stopping');
    // Gone 10 s after the abort at the latest, whatever the checkpoint flush does.
    setTimeout(() => process.exit(0), 10_000).unref();
    void service.stop().finally(() => process.exit(0));
  };
  process.on('SIGTERM', () => terminate('SIGTERM'));
  process.on('SIGINT', () => terminate('SIGINT'));
}

main().catch((error) => {
  console.error(`Verdict review container failed to start: ${(error as Error).message}`);
  process.exit(1);
});
