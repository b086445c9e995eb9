import { Writable } from 'node:stream';
import { loadConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/logger.js';

/** A destination that keeps what is written, and says whether it is a terminal. */
function sink(isTTY: boolean): Writable & { text: () => string; isTTY: boolean } {
  const chunks: string[] = [];
  const out = new Writable({
    write(chunk, _enc, done) {
      chunks.push(String(chunk));
      done();
    },
  }) as Writable & { text: () => string; isTTY: boolean };
  out.isTTY = isTTY;
  out.text = () => chunks.join('');
  return out;
}

describe('log format (LOG_FORMAT)', () => {
  test('auto: one JSON line per event when the output is not a terminal', () => {
    const out = sink(false);
    createLogger('info', out).info({ event: 'server-started', auth: { token: 's3cret' } }, 'listening');
    const line = JSON.parse(out.text().trim());
    expect(line).toMatchObject({ level: 30, service: 'verdict', event: 'server-started', msg: 'listening' });
    expect(line.auth.token).toBe('[redacted]');
  });

  test('auto: human-readable lines (pino-pretty) on a terminal, secrets still redacted', () => {
    const out = sink(true);
    createLogger('info', out).info({ event: 'server-started', auth: { token: 's3cret' } }, 'listening');
    const text = out.text();
    expect(() => JSON.parse(text.trim())).toThrow();
    expect(text).toMatch(/INFO/);
    expect(text).toContain('listening');
    expect(text).toContain('server-started');
    expect(text).not.toContain('s3cret');
  });

  test('json and pretty override what the terminal check would choose', () => {
    const tty = sink(true);
    createLogger('info', tty, 'json').warn('as json');
    expect(JSON.parse(tty.text().trim())).toMatchObject({ level: 40, msg: 'as json' });
    const file = sink(false);
    createLogger('info', file, 'pretty').warn('as text');
    expect(file.text()).toMatch(/WARN.*as text/);
    expect(file.text()).not.toContain('\u001b['); // no colours outside a terminal
  });

  test('the level still filters, whatever the format', () => {
    const out = sink(true);
    createLogger('warn', out).info('hidden');
    expect(out.text()).toBe('');
  });

  test('LOG_FORMAT is read from the environment: auto by default, a bad value is refused naming it', () => {
    expect(loadConfig({}).logFormat).toBe('auto');
    expect(loadConfig({ LOG_FORMAT: 'json' }).logFormat).toBe('json');
    expect(() => loadConfig({ LOG_FORMAT: 'xml' })).toThrow(/LOG_FORMAT/);
  });
});
