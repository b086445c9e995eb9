import { existsSync } from 'node:fs';
import { formatCheck, runDoctor, worst } from '../doctor/index.js';
import { CliError, type Io } from './io.js';
import type { Options } from './options.js';
import { painter } from './table.js';

const COLOURS = { ok: 'green', warn: 'yellow', fail: 'red' } as const;

/** `verdict doctor [--offline]`: one line per check; exit 1 when one fails. */
export async function run(args: string[], opts: Options, io: Io): Promise<number> {
  if (args.length > 0) throw new CliError('takes no arguments');
  const results = await runDoctor({
    env: io.env,
    offline: opts.offline === true,
    sources: existsSync('.env') ? 'the environment and .env' : 'the environment; no .env here',
  });
  const failed = worst(results.map((r) => r.status)) === 'fail';
  if (opts.json) {
    io.stdout(JSON.stringify({ ok: !failed, checks: results }, null, 2));
  } else {
    const paint = painter(io.isTty, io.env);
    for (const result of results) {
      const line = formatCheck(result);
      io.stdout(paint(result.status, COLOURS[result.status]) + line.slice(result.status.length));
    }
  }
  return failed ? 1 : 0;
}
