import { randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * One `.env` value as a line's right-hand side. Plain values stay bare; a value with a line break (the
 * App's PEM key) is written in double quotes with `\n` escapes, as Probot writes its `.env`: Node's
 * `--env-file` / `process.loadEnvFile` turn them back into line breaks, and `PRIVATE_KEY` accepts both.
 */
export function envValue(value: string): string {
  if (/^[A-Za-z0-9_.,:/@+=-]*$/.test(value)) return value;
  if (/["\\\r]/.test(value))
    throw new Error('a value with a quote, backslash or CR cannot be written to .env');
  return `"${value.replace(/\n/g, '\\n')}"`;
}

const ASSIGNMENT = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/;

/** How many lines an assignment starting with `rest` spans (a quoted value may run over several lines). */
function assignmentLines(lines: string[], start: number, rest: string): number {
  const quote = rest[0];
  if (quote !== '"' && quote !== "'" && quote !== '`') return 1;
  if (rest.indexOf(quote, 1) !== -1) return 1;
  for (let i = start + 1; i < lines.length; i++) if (lines[i]!.includes(quote)) return i - start + 1;
  return 1; // never closed: only this line is the assignment
}

/**
 * `text` with `values` set: the first assignment of each key is replaced in place (a multi-line quoted
 * value as a whole), later ones of the same key are dropped, keys not present are appended; every other
 * line (comments, other variables) is kept as it was.
 */
export function withEnvValues(text: string, values: Record<string, string>): string {
  const lines = text === '' ? [] : text.replace(/\r?\n$/, '').split(/\r?\n/);
  const out: string[] = [];
  const written = new Set<string>();
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const match = ASSIGNMENT.exec(line);
    const key = match?.[1];
    if (!match || key === undefined || !Object.hasOwn(values, key)) {
      out.push(line);
      continue;
    }
    i += assignmentLines(lines, i, match[2] ?? '') - 1;
    if (written.has(key)) continue;
    written.add(key);
    out.push(`${key}=${envValue(values[key]!)}`);
  }
  for (const [key, value] of Object.entries(values)) {
    if (!written.has(key)) out.push(`${key}=${envValue(value)}`);
  }
  return out.join('\n') + '\n';
}

/**
 * Sets `values` in the `.env` file at `path` (created when missing): the new text is written to a
 * temporary file beside it with mode 0600 and renamed over it, so a reader never sees half a file and the
 * secrets are never readable by other users.
 */
export function updateEnvFile(path: string, values: Record<string, string>): void {
  let current = '';
  try {
    current = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const next = withEnvValues(current, values);
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    writeFileSync(temp, next, { mode: 0o600, flag: 'wx' });
    chmodSync(temp, 0o600);
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}
