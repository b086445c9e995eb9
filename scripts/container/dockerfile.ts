/**
 * A reader for the subset of Dockerfile syntax that Verdict's Dockerfile uses, and the `.dockerignore`
 * matcher, for scripts/container/build-steps.ts: it performs the Dockerfile's steps on a machine without
 * Docker. Anything outside the subset is refused with the line it is on, so that a Dockerfile change
 * this emulation cannot follow fails loudly instead of being skipped.
 */

/** One instruction, its continuation lines joined. */
export type Instruction = {
  /** 1-based line of the instruction's first line. */
  line: number;
  /** Upper-case keyword: FROM, RUN, COPY, ... */
  keyword: string;
  /** `--name=value` flags before the arguments (COPY, HEALTHCHECK). */
  flags: Record<string, string>;
  /** The arguments after the flags, as written. */
  args: string;
  /** The exec form (`["a", "b"]`) when the arguments are one, else null (shell form). */
  exec: string[] | null;
};

export type Stage = {
  /** 0-based position. */
  index: number;
  /** The `AS` name, or null. */
  name: string | null;
  /** The base image, e.g. `node:20-slim`. */
  base: string;
  instructions: Instruction[];
};

/** The instructions this reader knows; any other keyword is refused. */
export const SUPPORTED = [
  'FROM',
  'WORKDIR',
  'COPY',
  'RUN',
  'ENV',
  'USER',
  'EXPOSE',
  'VOLUME',
  'HEALTHCHECK',
  'CMD',
  'LABEL',
] as const;

/** Flags each instruction may carry; any other flag is refused. */
const FLAGS: Record<string, readonly string[]> = {
  COPY: ['from', 'chown'],
  HEALTHCHECK: ['interval', 'timeout', 'start-period', 'retries'],
};

export class DockerfileError extends Error {}

/** Parses a Dockerfile into its stages. */
export function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = [];
  for (const ins of instructions(text)) {
    if (!(SUPPORTED as readonly string[]).includes(ins.keyword)) {
      throw new DockerfileError(
        `line ${ins.line}: ${ins.keyword} is not supported by scripts/container/build-steps.ts (it knows ${SUPPORTED.join(', ')})`,
      );
    }
    if (ins.keyword === 'FROM') {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(ins.args);
      if (!m) throw new DockerfileError(`line ${ins.line}: FROM <image> [AS <name>] expected`);
      stages.push({ index: stages.length, name: m[2] ?? null, base: m[1]!, instructions: [] });
      continue;
    }
    const stage = stages[stages.length - 1];
    if (!stage) throw new DockerfileError(`line ${ins.line}: ${ins.keyword} before the first FROM`);
    stage.instructions.push(ins);
  }
  if (stages.length === 0) throw new DockerfileError('no FROM: not a Dockerfile');
  return stages;
}

/** The instructions of a Dockerfile: comments dropped, `\` continuations joined, flags split off. */
function instructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const first = lines[i]!;
    if (/^\s*(#|$)/.test(first)) continue;
    const start = i + 1;
    let joined = '';
    let current = first;
    // A line ending in a backslash continues on the next line that is not a comment or blank.
    while (/\\\s*$/.test(current)) {
      joined += current.replace(/\\\s*$/, '');
      i++;
      while (i < lines.length && /^\s*(#|$)/.test(lines[i]!)) i++;
      if (i >= lines.length) throw new DockerfileError(`line ${start}: continuation at the end of the file`);
      current = lines[i]!;
    }
    joined += current;
    const m = /^\s*(\S+)\s*(.*)$/.exec(joined)!;
    const keyword = m[1]!.toUpperCase();
    let rest = m[2]!.trim();
    const flags: Record<string, string> = {};
    for (let f = /^--([a-z-]+)=(\S+)\s+/.exec(rest); f; f = /^--([a-z-]+)=(\S+)\s+/.exec(rest)) {
      if (!(FLAGS[keyword] ?? []).includes(f[1]!)) {
        throw new DockerfileError(`line ${start}: ${keyword} --${f[1]} is not supported by build-steps.ts`);
      }
      flags[f[1]!] = f[2]!;
      rest = rest.slice(f[0].length);
    }
    if (/^--/.test(rest))
      throw new DockerfileError(`line ${start}: ${keyword} ${rest.split(/\s/)[0]} is not supported`);
    if (keyword === 'HEALTHCHECK') {
      // HEALTHCHECK [flags] CMD <command>: the arguments are the command; HEALTHCHECK NONE has none.
      const cmd = /^CMD\s+(.*)$/i.exec(rest);
      if (!cmd && rest.toUpperCase() !== 'NONE') {
        throw new DockerfileError(
          `line ${start}: HEALTHCHECK [flags] CMD <command> or HEALTHCHECK NONE expected`,
        );
      }
      rest = cmd ? cmd[1]!.trim() : '';
    }
    out.push({ line: start, keyword, flags, args: rest, exec: execForm(rest, start) });
  }
  return out;
}

function execForm(args: string, line: number): string[] | null {
  if (!args.startsWith('[')) return null;
  try {
    const parsed: unknown = JSON.parse(args);
    if (Array.isArray(parsed) && parsed.every((a) => typeof a === 'string')) return parsed as string[];
  } catch {
    // Docker runs a `[` that is not a JSON array of strings as a shell command; this reader refuses it.
  }
  throw new DockerfileError(`line ${line}: an argument starting with [ must be a JSON array of strings`);
}

/**
 * `ENV` pairs: `K=V K2="v w"` (the form this Dockerfile uses), `$VAR`/`${VAR}` replaced from `env` (the
 * stage's variables so far), as Docker does. The legacy `ENV K V` form is refused.
 */
export function parseEnv(args: string, env: Record<string, string>, line = 0): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  const re = /\s*([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|'[^']*'|\S*)/y;
  let pos = 0;
  while (pos < args.length) {
    if (/^\s*$/.test(args.slice(pos))) break;
    re.lastIndex = pos;
    const m = re.exec(args);
    if (!m) throw new DockerfileError(`line ${line}: ENV KEY=value pairs expected, got: ${args.slice(pos)}`);
    const raw = m[2]!;
    const value = raw.startsWith('"')
      ? substitute(raw.slice(1, -1).replace(/\\(.)/g, '$1'), env)
      : raw.startsWith("'")
        ? raw.slice(1, -1)
        : substitute(raw, env);
    pairs.push([m[1]!, value]);
    pos = re.lastIndex;
  }
  return pairs;
}

/** `$VAR` and `${VAR}` replaced by their values (empty when unset), as in WORKDIR, COPY and ENV. */
export function substitute(text: string, env: Record<string, string>): string {
  return text.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
    (_m, a, b) => env[a ?? b] ?? '',
  );
}

/** A duration of HEALTHCHECK's flags (`30s`, `1m30s`, `500ms`) in milliseconds. */
export function durationMs(text: string): number {
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let total = 0;
  let rest = text;
  for (let m = /^(\d+(?:\.\d+)?)(ms|s|m|h)/.exec(rest); m; m = /^(\d+(?:\.\d+)?)(ms|s|m|h)/.exec(rest)) {
    total += Number(m[1]) * units[m[2]!]!;
    rest = rest.slice(m[0].length);
  }
  if (rest !== '' || text === '') throw new DockerfileError(`not a duration: ${text}`);
  return total;
}

/**
 * `.dockerignore` as Docker applies it to the build context: patterns are paths from the context's root
 * (a leading `/` is dropped), `*` and `?` match within one path segment, `**` any number of segments, a
 * pattern that matches a directory excludes everything under it, `!` re-includes, and the last pattern
 * that matches a path decides.
 */
export function dockerignore(text: string): (relPath: string) => boolean {
  const rules = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const negate = l.startsWith('!');
      const pattern = (negate ? l.slice(1).trim() : l).replace(/^\/+/, '').replace(/\/+$/, '');
      return { negate, re: globToRegExp(pattern) };
    });
  return (relPath: string) => {
    const parts = relPath.split('/').filter((p) => p !== '' && p !== '.');
    const candidates = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
    let excluded = false;
    for (const rule of rules) {
      if (candidates.some((c) => rule.re.test(c))) excluded = !rule.negate;
    }
    return excluded;
  };
}

function globToRegExp(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*' && pattern[i + 1] === '*') {
      const slash = pattern[i + 2] === '/';
      re += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '[') {
      const end = pattern.indexOf(']', i + 1);
      if (end < 0) throw new DockerfileError(`.dockerignore: unclosed [ in ${pattern}`);
      re += `[${pattern.slice(i + 1, end).replace(/^!/, '^')}]`;
      i = end;
    } else re += c.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}
