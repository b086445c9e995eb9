import { pino, type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';

/** `auto`: human-readable when the output is a terminal, one JSON line per event otherwise. */
export type LogFormat = 'auto' | 'json' | 'pretty';

/** Whether `format` writes human-readable lines to `destination` (a terminal, under `auto`). */
export function isPretty(format: LogFormat, destination: NodeJS.WritableStream): boolean {
  if (format === 'auto') return (destination as NodeJS.WriteStream).isTTY === true;
  return format === 'pretty';
}

/**
 * Structured logs (pino, as Probot uses). Secrets are redacted. One JSON line per event, or, when
 * `format` says so (a terminal under `auto`, the default), the same events made readable by pino-pretty
 * in this process (no worker thread), as Probot does.
 */
export function createLogger(
  level: string,
  destination?: NodeJS.WritableStream,
  format: LogFormat = 'auto',
): Logger {
  const out = destination ?? process.stdout;
  // JSON: pino's own fast writer to standard output unless a destination is given.
  const stream: DestinationStream | NodeJS.WritableStream | undefined = isPretty(format, out)
    ? pretty({
        destination: out,
        sync: true,
        colorize: (out as NodeJS.WriteStream).isTTY === true,
        ignore: 'pid,hostname,service',
        translateTime: 'SYS:HH:MM:ss.l',
      })
    : destination;
  return pino(
    {
      level,
      base: { service: 'verdict' },
      redact: {
        paths: ['*.privateKey', '*.token', '*.secret', 'headers.authorization', '*.authorization'],
        censor: '[redacted]',
      },
    },
    stream as DestinationStream | undefined,
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
