/**
 * Performs the Dockerfile's build steps on this machine, without Docker, then runs the image's command as
 * the container would and asks it what the HEALTHCHECK asks (test/integration/container.test.ts runs it).
 *
 *   npx tsx scripts/container/build-steps.ts [--context .] [--dockerfile <context>/Dockerfile]
 *       [--compose <context>/compose.yaml] [--worker-service worker] [--report out.json] [--keep] [--verbose]
 *       [--tmp <dir>: where the stages' directories go; default /dev/shm when it has 4 GB free, else $TMPDIR]
 *
 * Everything is read from the Dockerfile (scripts/container/dockerfile.ts refuses what it cannot follow):
 * - Each stage gets a directory standing for its root file system; WORKDIR, COPY and volume paths are
 *   mapped into it. The base image is this machine: `FROM node:<major>...` requires that Node major here.
 * - COPY from the context applies .dockerignore (a source it excludes is "not found", as in Docker);
 *   COPY --from copies (hard-links) another stage's files; --chown sets owners.
 * - RUN runs through `sh -c` in the stage's WORKDIR, with the stage's ENV, as root or as the USER. The
 *   registry is not reached: npm runs with `--offline` against this machine's npm cache, and a dependency
 *   that installs a prebuilt binary with prebuild-install (better-sqlite3) is given the binary this
 *   checkout's node_modules already holds for the same version, where the image's build downloads it.
 *   Commands in RUN must use paths relative to the WORKDIR: an absolute path would be this machine's.
 * - The last stage is the image. Its VOLUME directories must belong to its USER (a named volume starts as
 *   a copy of them). Its CMD starts as the USER (setpriv) with the image's ENV plus PORT (a free port),
 *   HOST=127.0.0.1, VERDICT_WORKER_INLINE=0 and VERDICT_OPERATOR_UI_ENABLED=1; then GET /health must
 *   answer 200, the HEALTHCHECK command must exit 0, the dashboard's page and a script of it must be
 *   served (web/dist reached the image), the store must have been created in the volume by the USER,
 *   the compose file's worker command must start ("worker-started") and stop on SIGTERM, and the server
 *   must stop on SIGTERM within Docker's 10 seconds.
 *
 * Prints one line per step and `build-steps: ok` (or `build-steps: FAILED: <why>`, exit 1) at the end;
 * --report writes what it found as JSON. The temporary directory is removed unless --keep.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import * as tar from 'tar';
import { parseDocument } from 'yaml';
import {
  DockerfileError,
  dockerignore,
  durationMs,
  parseDockerfile,
  parseEnv,
  substitute,
  type Instruction,
  type Stage,
} from './dockerfile.js';

type User = { uid: number; gid: number };
const ROOT: User = { uid: 0, gid: 0 };

type StageState = {
  stage: Stage;
  rootfs: string;
  env: Record<string, string>;
  workdir: string;
  user: User;
  userText: string | null;
  cmd: string[] | null;
  healthcheck: { command: string[]; flags: Record<string, string> } | null;
  volumes: string[];
  expose: string[];
};

export type BuildReport = {
  ok: boolean;
  error?: string;
  dockerfile: string;
  stages: Array<{ name: string | null; base: string; steps: number; ms: number }>;
  image?: {
    user: string | null;
    workdir: string;
    env: Record<string, string>;
    cmd: string[] | null;
    healthcheck: { command: string[]; flags: Record<string, string> } | null;
    volumes: string[];
    expose: string[];
  };
  run?: {
    uid: number | null;
    health: { status: number; body: unknown };
    healthcheckExitCode: number | null;
    dashboard: { page: number; asset: number | null };
    volumeFiles: Array<{ path: string; uid: number }>;
    worker: { command: string[]; started: boolean; exitCode: number | null; stopMs: number } | null;
    server: { signal: 'SIGTERM'; exitCode: number | null; stopMs: number };
  };
};

class StepError extends Error {}

/** A stage whose build has started. */
type Started = { stage: Stage; built: Promise<StageState> };
/** Set when a stage failed: the others stop at their next step. */
let aborted = false;

const { values: opts } = parseArgs({
  options: {
    context: { type: 'string', default: '.' },
    dockerfile: { type: 'string' },
    compose: { type: 'string' },
    'worker-service': { type: 'string', default: 'worker' },
    report: { type: 'string' },
    keep: { type: 'boolean', default: false },
    tmp: { type: 'string' },
    verbose: { type: 'boolean', default: false },
  },
});

const context = path.resolve(opts.context!);
const dockerfilePath = path.resolve(opts.dockerfile ?? path.join(context, 'Dockerfile'));
const composePath = opts.compose ?? path.join(context, 'compose.yaml');
const children = new Set<ChildProcess>();
const report: BuildReport = { ok: false, dockerfile: dockerfilePath, stages: [] };
const isRoot = process.getuid?.() === 0;

const began = Date.now();
function say(line: string): void {
  process.stdout.write(`${((Date.now() - began) / 1000).toFixed(1).padStart(6)}s ${line}\n`);
}

async function main(): Promise<void> {
  const stages = parseDockerfile(fs.readFileSync(dockerfilePath, 'utf8'));
  const ignorePath = path.join(context, '.dockerignore');
  const ignored = dockerignore(fs.existsSync(ignorePath) ? fs.readFileSync(ignorePath, 'utf8') : '');
  const tmp = fs.mkdtempSync(path.join(opts.tmp ?? scratchParent(), 'verdict-image-'));
  // The image's user must reach the stage directories, as it reaches / in a container.
  fs.chmodSync(tmp, 0o755);
  // Stopped from outside (a test's time limit, Ctrl-C): the processes started and the stages' files
  // (over a gigabyte, in memory on /dev/shm) go too.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      for (const child of children) killGroup(child);
      if (!opts.keep) fs.rmSync(tmp, { recursive: true, force: true });
      say(`build-steps: FAILED: stopped by ${signal}`);
      process.exit(1);
    });
  }
  say(
    `build-steps: ${path.relative(process.cwd(), dockerfilePath) || dockerfilePath}, context ${context}, in ${tmp}`,
  );
  try {
    const buildEnv = await buildEnvironment(tmp);
    // Every stage starts at once, as BuildKit's do: a COPY --from waits for its stage to be built.
    const started: Started[] = [];
    let firstError: unknown = null;
    for (const stage of stages) {
      const t0 = Date.now();
      const built = buildStage(stage, [...started], { tmp, ignored, buildEnv }).then((state) => {
        report.stages[stage.index] = {
          name: stage.name,
          base: stage.base,
          steps: stage.instructions.length,
          ms: Date.now() - t0,
        };
        return state;
      });
      built.catch((error: unknown) => {
        if (aborted) return;
        aborted = true;
        firstError = error;
        for (const child of children) killGroup(child);
      });
      started.push({ stage, built });
    }
    const results = await Promise.allSettled(started.map((s) => s.built));
    if (aborted) throw firstError;
    const image = results[results.length - 1] as PromiseFulfilledResult<StageState>;
    await runImage(image.value, tmp);
    report.ok = true;
  } finally {
    for (const child of children) killGroup(child);
    if (opts.keep) say(`build-steps: kept ${tmp}`);
    else fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * Where the stages' directories go: /dev/shm when it has room (the stages hold about 1.2 GB in some
 * 100,000 files, which a disk with discard takes a minute and more to delete), else the temporary directory.
 */
function scratchParent(): string {
  try {
    const shm = fs.statfsSync('/dev/shm');
    fs.accessSync('/dev/shm', fs.constants.W_OK);
    if (shm.bavail * shm.bsize >= 4 * 2 ** 30) return '/dev/shm';
  } catch {
    // No /dev/shm here.
  }
  return os.tmpdir();
}

// --- build ---------------------------------------------------------------------------------------------

/**
 * The environment of every RUN besides the stage's ENV: npm offline against this machine's cache, and
 * the checkout's own prebuilt binaries offered to prebuild-install as local prebuilds.
 */
async function buildEnvironment(tmp: string): Promise<Record<string, string>> {
  const cache = spawnSync('npm', ['config', 'get', 'cache'], { encoding: 'utf8' }).stdout.trim();
  if (!cache || !fs.existsSync(cache))
    throw new StepError(`no npm cache at "${cache}": run npm ci in the checkout first`);
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: process.env.HOME ?? '/root',
    npm_config_cache: cache,
    npm_config_offline: 'true',
    npm_config_update_notifier: 'false',
  };
  const prebuilds = path.join(tmp, 'prebuilds');
  fs.mkdirSync(prebuilds);
  for (const pkgDir of installedPackages(path.join(context, 'node_modules'))) {
    const pkg = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8')) as {
      name: string;
      version: string;
      scripts?: Record<string, string>;
    };
    if (!/^prebuild-install\b/.test(pkg.scripts?.install ?? '')) continue;
    const release = path.join(pkgDir, 'build', 'Release');
    const built = fs.existsSync(release) ? fs.readdirSync(release).filter((f) => f.endsWith('.node')) : [];
    // A published prebuild holds the package's one addon (prebuild-install loads the last .node it
    // unpacks): the one named after the package, or the only one there is.
    const own = `${pkg.name.replace(/^@[^/]+\//, '').replace(/[^a-zA-Z0-9]/g, '_')}.node`;
    const binaries = built.includes(own) ? [own] : built.length === 1 ? built : [];
    if (binaries.length === 0) {
      say(`  ${pkg.name}: no built addon in the checkout, so its install compiles it from source (slow)`);
      continue;
    }
    // prebuild-install's default asset name: {name}-v{version}-{runtime}-v{abi}-{platform}{libc}-{arch}.tar.gz
    const name = pkg.name.replace(/^@[^/]+\//, '');
    const file = `${name}-v${pkg.version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
    await tar.create(
      { gzip: true, file: path.join(prebuilds, file), cwd: pkgDir, portable: true },
      binaries.map((b) => `build/Release/${b}`),
    );
    env[`npm_config_${pkg.name.replace(/[^a-zA-Z0-9]/g, '_').replace(/^_/, '')}_local_prebuilds`] = prebuilds;
    say(
      `  ${pkg.name}@${pkg.version}: prebuilt binary taken from the checkout (the image's build downloads it)`,
    );
  }
  return env;
}

function installedPackages(modules: string): string[] {
  if (!fs.existsSync(modules)) return [];
  const out: string[] = [];
  for (const entry of fs.readdirSync(modules)) {
    if (entry.startsWith('.')) continue;
    const dir = path.join(modules, entry);
    if (entry.startsWith('@')) {
      for (const sub of fs.readdirSync(dir)) out.push(path.join(dir, sub));
    } else out.push(dir);
  }
  return out.filter((d) => fs.existsSync(path.join(d, 'package.json')));
}

async function buildStage(
  stage: Stage,
  earlier: Started[],
  deps: { tmp: string; ignored: (rel: string) => boolean; buildEnv: Record<string, string> },
): Promise<StageState> {
  const label = stage.name ?? `stage ${stage.index}`;
  const base = /^node:(\d+)(?:[.-]|$)/.exec(stage.base);
  if (!base) {
    throw new StepError(
      `${label}: FROM ${stage.base}: only node:<major>… base images are emulated (by this machine)`,
    );
  }
  const major = process.versions.node.split('.')[0];
  if (base[1] !== major) {
    throw new StepError(`${label}: FROM ${stage.base}, but this machine runs Node ${process.versions.node}`);
  }
  const rootfs = path.join(deps.tmp, `stage-${stage.index}${stage.name ? `-${stage.name}` : ''}`);
  fs.mkdirSync(rootfs, { mode: 0o755 });
  const state: StageState = {
    stage,
    rootfs,
    env: {},
    workdir: '/',
    user: ROOT,
    userText: null,
    cmd: null,
    healthcheck: null,
    volumes: [],
    expose: [],
  };
  say(`[${label}] FROM ${stage.base} (this machine's Node ${process.versions.node})`);
  for (const [i, ins] of stage.instructions.entries()) {
    const started = Date.now();
    const head = `[${label} ${i + 1}/${stage.instructions.length}] ${ins.keyword} ${summary(ins)}`;
    try {
      if (aborted) throw new StepError('stopped: another stage failed');
      await step(state, ins, earlier, deps);
    } catch (error) {
      say(`${head}: failed`);
      const why =
        error instanceof StepError || error instanceof DockerfileError ? error.message : String(error);
      throw new StepError(`Dockerfile line ${ins.line} (${label}: ${ins.keyword} ${summary(ins)}): ${why}`);
    }
    say(`${head} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  }
  return state;
}

function summary(ins: Instruction): string {
  const flags = Object.entries(ins.flags).map(([k, v]) => `--${k}=${v} `);
  const text = `${flags.join('')}${ins.args}`.replace(/\s+/g, ' ');
  return text.length > 110 ? `${text.slice(0, 107)}...` : text;
}

async function step(
  state: StageState,
  ins: Instruction,
  earlier: Started[],
  deps: { ignored: (rel: string) => boolean; buildEnv: Record<string, string> },
): Promise<void> {
  switch (ins.keyword) {
    case 'WORKDIR': {
      state.workdir = path.posix.resolve(state.workdir, substitute(ins.args, state.env));
      fs.mkdirSync(hostPath(state, state.workdir), { recursive: true, mode: 0o755 });
      return;
    }
    case 'ENV':
      for (const [k, v] of parseEnv(ins.args, state.env, ins.line)) {
        // Only WORKDIR, COPY and VOLUME paths are mapped into the stage's directory: a process given
        // an absolute path through its environment would use this machine's.
        if (v.startsWith('/')) {
          throw new StepError(
            `ENV ${k}=${v}: an absolute path is not emulated (use one relative to the WORKDIR)`,
          );
        }
        state.env[k] = v;
      }
      return;
    case 'USER': {
      const text = substitute(ins.args, state.env);
      state.user = parseUser(text);
      state.userText = text;
      return;
    }
    case 'COPY':
      return copy(state, ins, earlier, deps.ignored);
    case 'RUN':
      return run(state, ins, deps.buildEnv);
    case 'EXPOSE':
      state.expose.push(...ins.args.split(/\s+/));
      return;
    case 'VOLUME':
      state.volumes.push(
        ...(ins.exec ?? ins.args.split(/\s+/)).map((v) => path.posix.resolve(state.workdir, v)),
      );
      return;
    case 'HEALTHCHECK':
      state.healthcheck =
        ins.args === '' ? null : { command: ins.exec ?? ['/bin/sh', '-c', ins.args], flags: ins.flags };
      return;
    case 'CMD':
      state.cmd = ins.exec ?? ['/bin/sh', '-c', ins.args];
      return;
    case 'LABEL':
      return;
    default:
      throw new StepError(`${ins.keyword} is not emulated`);
  }
}

/** USER as numbers: there is no image /etc/passwd here to look a name up in (root alone is known). */
function parseUser(text: string): User {
  if (text === 'root') return ROOT;
  const m = /^(\d+)(?::(\d+))?$/.exec(text);
  if (!m)
    throw new StepError(
      `USER ${text}: give it as uid[:gid] (numbers; build-steps.ts has no /etc/passwd of the image)`,
    );
  return { uid: Number(m[1]), gid: Number(m[2] ?? m[1]) };
}

/** A path in the stage's file system, as a path on this machine. */
function hostPath(state: StageState, containerPath: string): string {
  const abs = path.posix.resolve(state.workdir, containerPath);
  return path.join(state.rootfs, abs);
}

async function copy(
  state: StageState,
  ins: Instruction,
  earlier: Started[],
  ignored: (rel: string) => boolean,
): Promise<void> {
  const words = (ins.exec ?? ins.args.split(/\s+/)).map((w) => substitute(w, state.env));
  if (words.length < 2) throw new StepError('COPY <src>... <dest> expected');
  const dest = words[words.length - 1]!;
  const sources = words.slice(0, -1);
  if (sources.some((s) => /[*?[]/.test(s))) throw new StepError('wildcards in COPY sources are not emulated');
  const destIsDir = dest.endsWith('/') || sources.length > 1;
  const destHost = hostPath(state, dest);
  const from = ins.flags.from;
  const sourceStage =
    from === undefined ? null : earlier.find((s) => s.stage.name === from || String(s.stage.index) === from);
  if (from !== undefined && !sourceStage)
    throw new StepError(`--from=${from}: no earlier stage of that name`);
  const source = sourceStage ? await sourceStage.built : null;
  const owner = ins.flags.chown === undefined ? null : parseUser(ins.flags.chown);
  if (owner && !isRoot && (owner.uid !== process.getuid?.() || owner.gid !== process.getgid?.())) {
    throw new StepError(`--chown=${ins.flags.chown} needs root here`);
  }
  for (const src of sources) {
    let srcHost: string;
    let filter: ((rel: string) => boolean) | null = null;
    if (source) {
      // COPY --from paths are from the other stage's root.
      srcHost = path.join(source.rootfs, path.posix.resolve('/', src));
    } else {
      const rel = path.posix.normalize(src).replace(/^(\.\/|\/)+/, '');
      if (rel.startsWith('..')) throw new StepError(`${src} is outside the build context`);
      srcHost = path.join(context, rel);
      if (rel !== '.' && rel !== '' && ignored(rel)) {
        throw new StepError(`${src}: not found in the build context (.dockerignore excludes it)`);
      }
      filter = (sub: string) => !ignored(rel === '.' || rel === '' ? sub : `${rel}/${sub}`);
    }
    if (!fs.existsSync(srcHost))
      throw new StepError(`${src}: not found${source ? ` in stage ${from}` : ' in the build context'}`);
    const isDir = fs.statSync(srcHost).isDirectory();
    // A directory's contents are copied (not the directory itself); a file goes into a directory
    // destination under its own name.
    const target = isDir
      ? destHost
      : destIsDir || isExistingDir(destHost)
        ? path.join(destHost, path.basename(srcHost))
        : destHost;
    fs.mkdirSync(isDir ? target : path.dirname(target), { recursive: true, mode: 0o755 });
    copyTree(srcHost, target, { filter, link: source !== null && owner === null, owner });
  }
}

function isExistingDir(p: string): boolean {
  return fs.existsSync(p) && fs.statSync(p).isDirectory();
}

/**
 * Copies a file or a directory's contents: symbolic links kept as links, files copied with their modes
 * or hard-linked (`link`, for another stage's files: nothing changes them afterwards), entries a filter
 * refuses left out, and everything created given `owner` when set.
 */
function copyTree(
  src: string,
  dest: string,
  o: { filter: ((rel: string) => boolean) | null; link: boolean; owner: User | null },
): void {
  const own = (p: string) => {
    if (o.owner) fs.lchownSync(p, o.owner.uid, o.owner.gid);
  };
  const one = (from: string, to: string) => {
    const st = fs.lstatSync(from);
    if (st.isSymbolicLink()) {
      fs.rmSync(to, { force: true });
      fs.symlinkSync(fs.readlinkSync(from), to);
    } else if (st.isFile()) {
      fs.rmSync(to, { force: true });
      if (o.link) fs.linkSync(from, to);
      else fs.copyFileSync(from, to);
    }
    own(to);
  };
  if (!fs.lstatSync(src).isDirectory()) return one(src, dest);
  own(dest);
  const walk = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(src, rel), { withFileTypes: true })) {
      const sub = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (o.filter && !o.filter(sub)) continue;
      const to = path.join(dest, sub);
      if (entry.isDirectory()) {
        fs.mkdirSync(to, { recursive: true, mode: fs.statSync(path.join(src, sub)).mode & 0o7777 });
        own(to);
        walk(sub);
      } else one(path.join(src, sub), to);
    }
  };
  walk('');
}

async function run(state: StageState, ins: Instruction, buildEnv: Record<string, string>): Promise<void> {
  if (/\bnpm\s+cache\s+clean\b/.test(ins.args)) {
    throw new StepError(
      'npm cache clean would empty this machine’s npm cache: leave it to a stage the image does not copy',
    );
  }
  const argv = ins.exec ?? ['/bin/sh', '-c', ins.args];
  const env = { ...buildEnv, ...state.env };
  const code = await spawnAs(state.user, argv, {
    cwd: hostPath(state, state.workdir),
    env,
    verbose: opts.verbose,
  });
  if (code.exitCode !== 0) {
    throw new StepError(`exited ${code.exitCode ?? code.signal}\n${tail(code.output, 40)}`);
  }
}

function tail(text: string, lines: number): string {
  return text
    .trimEnd()
    .split('\n')
    .slice(-lines)
    .map((l) => `    ${l}`)
    .join('\n');
}

/** The argv wrapped to run as `user` (setpriv drops root's groups too), or as is for root. */
function asUser(user: User, argv: string[]): string[] {
  if (user.uid === 0 && user.gid === 0) return argv;
  if (!isRoot) {
    if (user.uid === process.getuid?.()) return argv;
    throw new StepError(`running as uid ${user.uid} needs root here (the container would switch users)`);
  }
  if (!onPath('setpriv'))
    throw new StepError(`running as uid ${user.uid} needs setpriv (util-linux) on PATH`);
  return ['setpriv', `--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', '--', ...argv];
}

function onPath(name: string): boolean {
  return (process.env.PATH ?? '').split(':').some((dir) => dir !== '' && fs.existsSync(path.join(dir, name)));
}

/**
 * Kills a started process and everything it started: each runs in its own process group (`detached`),
 * so that `sh -c 'npm ci ...'` takes npm with it.
 */
function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}

function spawnAs(
  user: User,
  argv: string[],
  o: { cwd: string; env: Record<string, string>; verbose?: boolean; timeoutMs?: number },
): Promise<{ exitCode: number | null; signal: string | null; output: string }> {
  const [cmd, ...args] = asUser(user, argv);
  return new Promise((resolve, reject) => {
    const child = spawn(cmd!, args, {
      cwd: o.cwd,
      env: o.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    children.add(child);
    let output = '';
    const take = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.length > 1_000_000) output = output.slice(-500_000);
      if (o.verbose) process.stdout.write(chunk);
    };
    child.stdout!.on('data', take);
    child.stderr!.on('data', take);
    const timer = o.timeoutMs ? setTimeout(() => killGroup(child), o.timeoutMs) : null;
    child.on('error', reject);
    child.on('close', (exitCode, signal) => {
      if (timer) clearTimeout(timer);
      children.delete(child);
      resolve({ exitCode, signal, output });
    });
  });
}

// --- run -----------------------------------------------------------------------------------------------

/** A started process of the image, with its output and its pino log lines as they come. */
type Proc = {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: string | null }>;
  waitForEvent: (event: string, timeoutMs: number) => Promise<void>;
};

function startProcess(image: StageState, argv: string[], env: Record<string, string>): Proc {
  const [cmd, ...args] = asUser(image.user, argv);
  const child = spawn(cmd!, args, {
    cwd: hostPath(image, image.workdir),
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  children.add(child);
  let out = '';
  const waiters: Array<{ event: string; done: () => void }> = [];
  const take = (chunk: Buffer) => {
    out += chunk.toString();
    if (opts.verbose) process.stdout.write(chunk);
    for (const w of [...waiters]) {
      if (out.includes(`"event":"${w.event}"`)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.done();
      }
    }
  };
  child.stdout!.on('data', take);
  child.stderr!.on('data', take);
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.on('close', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    }),
  );
  return {
    child,
    output: () => out,
    exited,
    waitForEvent: (event, timeoutMs) =>
      new Promise<void>((resolve, reject) => {
        if (out.includes(`"event":"${event}"`)) return resolve();
        const timer = setTimeout(
          () => reject(new StepError(`no "${event}" log line within ${timeoutMs} ms\n${tail(out, 30)}`)),
          timeoutMs,
        );
        waiters.push({ event, done: () => (clearTimeout(timer), resolve()) });
        void exited.then(({ code, signal }) => {
          clearTimeout(timer);
          reject(new StepError(`exited ${code ?? signal} before its "${event}" log line\n${tail(out, 30)}`));
        });
      }),
  };
}

async function stopProcess(
  proc: Proc,
  graceMs: number,
): Promise<{ exitCode: number | null; stopMs: number }> {
  const started = Date.now();
  proc.child.kill('SIGTERM');
  const timer = setTimeout(() => killGroup(proc.child), graceMs);
  const { code, signal } = await proc.exited;
  clearTimeout(timer);
  const stopMs = Date.now() - started;
  if (signal === 'SIGKILL')
    throw new StepError(`did not stop within ${graceMs} ms of SIGTERM (killed)\n${tail(proc.output(), 20)}`);
  return { exitCode: code, stopMs };
}

async function runImage(image: StageState, tmp: string): Promise<void> {
  report.image = {
    user: image.userText,
    workdir: image.workdir,
    env: image.env,
    cmd: image.cmd,
    healthcheck: image.healthcheck,
    volumes: image.volumes,
    expose: image.expose,
  };
  if (!image.cmd) throw new StepError('the image has no CMD');
  for (const volume of image.volumes) {
    const dir = hostPath(image, volume);
    if (!isExistingDir(dir))
      throw new StepError(
        `VOLUME ${volume} does not exist in the image: a named volume mounted there would start out owned by root`,
      );
    const { uid } = fs.statSync(dir);
    if (uid !== image.user.uid) {
      throw new StepError(
        `VOLUME ${volume} belongs to uid ${uid} in the image, not to the USER (${image.user.uid}): it could not write there`,
      );
    }
  }
  const port = await freePort();
  const home = path.join(tmp, `home-${image.user.uid}`);
  fs.mkdirSync(home, { mode: 0o755 });
  if (isRoot) fs.chownSync(home, image.user.uid, image.user.gid);
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    HOSTNAME: 'verdict-image',
    ...image.env,
    // `docker run -e`: a free port; bound to loopback only (a container would have its own network);
    // the topology of compose.yaml (no inline worker); the dashboard on, to see web/dist served.
    PORT: String(port),
    HOST: '127.0.0.1',
    VERDICT_WORKER_INLINE: '0',
    VERDICT_OPERATOR_UI_ENABLED: '1',
  };
  say(`[run] ${image.cmd.join(' ')} as ${image.userText ?? 'root'} in ${image.workdir}, PORT=${port}`);
  const server = startProcess(image, image.cmd, env);
  const base = `http://127.0.0.1:${port}`;
  const startPeriod = image.healthcheck?.flags['start-period']
    ? durationMs(image.healthcheck.flags['start-period'])
    : 0;
  const health = await waitForHealth(`${base}/health`, server, Math.max(60_000, startPeriod));
  say(`[run] GET /health: ${health.status} ${JSON.stringify(health.body)}`);
  const uid = processUid(server.child.pid);
  if (uid !== image.user.uid)
    throw new StepError(`the server runs as uid ${uid}, not the image's USER ${image.user.uid}`);

  let healthcheckExitCode: number | null = null;
  if (image.healthcheck) {
    const timeoutMs = image.healthcheck.flags.timeout ? durationMs(image.healthcheck.flags.timeout) : 30_000;
    const result = await spawnAs(image.user, image.healthcheck.command, {
      cwd: hostPath(image, image.workdir),
      env,
      timeoutMs,
    });
    healthcheckExitCode = result.exitCode;
    say(`[run] HEALTHCHECK: exit ${result.exitCode ?? result.signal}`);
    if (result.exitCode !== 0)
      throw new StepError(
        `the HEALTHCHECK command exited ${result.exitCode ?? result.signal}\n${tail(result.output, 20)}`,
      );
  }

  const page = await fetch(`${base}/operator/login`, { headers: { accept: 'text/html' } });
  const html = await page.text();
  const assetPath = /\/operator\/assets\/[^"']+\.js/.exec(html)?.[0] ?? null;
  const asset = assetPath ? (await fetch(`${base}${assetPath}`)).status : null;
  say(`[run] dashboard: /operator/login ${page.status}, ${assetPath ?? '(no script)'} ${asset ?? '-'}`);
  if (page.status !== 200 || asset !== 200)
    throw new StepError(`the dashboard is not served from web/dist (page ${page.status}, script ${asset})`);

  const volumeFiles = image.volumes.flatMap((volume) =>
    fs.readdirSync(hostPath(image, volume)).map((f) => ({
      path: path.posix.join(volume, f),
      uid: fs.statSync(path.join(hostPath(image, volume), f)).uid,
    })),
  );
  say(`[run] volume files: ${volumeFiles.map((f) => `${f.path} (uid ${f.uid})`).join(', ') || 'none'}`);

  const worker = await runWorker(image, env);

  const stopped = await stopProcess(server, 10_000);
  say(`[run] server: SIGTERM, exit ${stopped.exitCode} after ${stopped.stopMs} ms`);
  if (stopped.exitCode !== 0)
    throw new StepError(`the server exited ${stopped.exitCode} on SIGTERM\n${tail(server.output(), 20)}`);
  report.run = {
    uid,
    health,
    healthcheckExitCode,
    dashboard: { page: page.status, asset },
    volumeFiles,
    worker,
    server: { signal: 'SIGTERM', exitCode: stopped.exitCode, stopMs: stopped.stopMs },
  };
}

/** The compose file's worker service, started from the image with its command, then stopped. */
async function runWorker(
  image: StageState,
  env: Record<string, string>,
): Promise<NonNullable<BuildReport['run']>['worker']> {
  if (!fs.existsSync(composePath)) {
    say(`[run] no ${composePath}: no worker to start`);
    return null;
  }
  const doc = parseDocument(fs.readFileSync(composePath, 'utf8'), { merge: true }).toJS() as {
    services?: Record<string, { command?: string[] | string; stop_grace_period?: string }>;
  };
  const service = doc.services?.[opts['worker-service']!];
  if (!service) throw new StepError(`${composePath} has no service "${opts['worker-service']}"`);
  if (!Array.isArray(service.command))
    throw new StepError(`the ${opts['worker-service']} service's command must be a list (exec form)`);
  const grace = service.stop_grace_period ? durationMs(service.stop_grace_period) : 10_000;
  say(`[run] ${opts['worker-service']}: ${service.command.join(' ')}`);
  const worker = startProcess(image, service.command, env);
  await worker.waitForEvent('worker-started', 60_000);
  const stopped = await stopProcess(worker, grace);
  say(
    `[run] ${opts['worker-service']}: started, SIGTERM, exit ${stopped.exitCode} after ${stopped.stopMs} ms`,
  );
  if (stopped.exitCode !== 0)
    throw new StepError(`the worker exited ${stopped.exitCode} on SIGTERM\n${tail(worker.output(), 20)}`);
  return { command: service.command, started: true, exitCode: stopped.exitCode, stopMs: stopped.stopMs };
}

async function waitForHealth(
  url: string,
  proc: Proc,
  timeoutMs: number,
): Promise<{ status: number; body: unknown }> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void proc.exited.then(() => (exited = true));
  while (Date.now() < deadline) {
    if (exited) throw new StepError(`the server exited before answering /health\n${tail(proc.output(), 30)}`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      const text = await res.text();
      if (res.status === 200) return { status: res.status, body: JSON.parse(text) };
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new StepError(`no 200 from ${url} within ${timeoutMs} ms\n${tail(proc.output(), 30)}`);
}

function processUid(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /^Uid:\s+(\d+)/m.exec(status);
  return m ? Number(m[1]) : null;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

main()
  .then(() => say('build-steps: ok'))
  .catch((error: unknown) => {
    report.error = error instanceof Error ? error.message : String(error);
    say(`build-steps: FAILED: ${report.error}`);
    process.exitCode = 1;
  })
  .finally(() => {
    if (opts.report) fs.writeFileSync(opts.report, `${JSON.stringify(report, null, 2)}\n`);
  });
