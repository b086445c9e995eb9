import { pino, type Logger } from 'pino';

/** Structured logs, one JSON line per event (pino, as Probot uses). Secrets are redacted. */
export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: { service: 'verdict' },
      redact: {
        paths: ['*.privateKey', '*.token', '*.secret', 'headers.authorization', '*.authorization'],
        censor: '[redacted]',
      },
    },
    destination as any,
  );
}

/**
 * Graceful stop for a process entry point: on the first SIGTERM or SIGINT, log it, run `stop` (no new
 * claims, finish or release in-flight jobs, close the store) and exit 0.
 */
export function stopOnSignals(log: Logger, message: string, stop: () => Promise<void>): void {
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ event: 'shutdown', signal }, message);
    await stop();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}
