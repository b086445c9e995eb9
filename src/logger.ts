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
