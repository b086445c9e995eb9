/**
 * Ingress benchmark: signed `pull_request.opened` webhooks (from @octokit/webhooks-examples, a unique
 * delivery id each) at 50 connections with autocannon, against Verdict on SQLite with its worker off
 * (ingress only), against Verdict as `npm start` runs it by default (the inline worker on, in its thread,
 * processing what it ingests), and against a bare Probot app. The three servers run for the whole
 * benchmark and are loaded in turns (BENCH_ROUNDS times), so a change of the machine's speed during the
 * run (frequent on a shared 2-core machine) hits all alike. Prints each round, then the median webhooks/s
 * and p99 of each and the ratios, checks that Verdict stored every delivery it acknowledged, and that the
 * default set-up processed every delivery it stored.
 *
 *   npm run bench:ingress   (BENCH_SECONDS=5 BENCH_ROUNDS=10 BENCH_CONNECTIONS=50 by default)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import knexFactory from 'knex';
import { body, webhookLoad } from './webhook-load.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const SECRET = 'bench-secret';
const TSX = join(process.cwd(), 'node_modules', '.bin', 'tsx');

async function waitForPort(port: number, path: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    try {
      await fetch(`http://127.0.0.1:${port}${path}`);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`server on ${port} did not start`);
}

function startChild(script: string, env: Record<string, string>): ChildProcess {
  const child = spawn(TSX, [script], {
    env: { ...process.env, NODE_OPTIONS: '', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return child;
}

async function stopChild(child: ChildProcess): Promise<void> {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/**
 * CPU accounting, where /proc exists (Linux): the CPU time of every thread of a server's process tree
 * (tsx's launcher and the server), in clock ticks, by `pid/tid`; and the busy ticks of the whole machine.
 * Read before and after each load, they give the CPU each server spends per webhook, its event loop's
 * share (the main thread of its busiest process) and the rest (V8's helper threads, libuv's pool), how busy the machine was, and what the load generator (this process) used.
 */
const PROC = existsSync('/proc/self/task');
const TICKS_PER_SECOND = 100; // USER_HZ, 100 on Linux

function readStat(path: string): string[] | null {
  try {
    const text = readFileSync(path, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' '); // fields from the 3rd on (state)
  } catch {
    return null; // the process or thread ended meanwhile
  }
}

type ThreadTicks = Map<string, number>;

/** The process `root` and its descendants (tsx's launcher and the server it starts). */
function tree(root: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(`/proc/${entry}/stat`);
    if (stat) parents.set(Number(entry), Number(stat[1]));
  }
  const pids: number[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    pids.push(pid);
    for (const [child, parent] of parents) if (parent === pid) stack.push(child);
  }
  return pids;
}

/**
 * Pauses (SIGSTOP) or resumes (SIGCONT) a server's whole process tree. The default set-up goes on
 * processing its backlog after its own round; left running, that work would take CPU from the other two
 * servers' rounds (and not equally), so it is paused while they are measured.
 */
function signalTree(root: number, signal: 'SIGSTOP' | 'SIGCONT'): void {
  if (!PROC) return;
  for (const pid of tree(root)) {
    try {
      process.kill(pid, signal);
    } catch {
      // ended meanwhile
    }
  }
}

function treeTicks(root: number): ThreadTicks {
  const ticks: ThreadTicks = new Map();
  for (const pid of tree(root)) {
    let tids: string[] = [];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tids) {
      const stat = readStat(`/proc/${pid}/task/${tid}/stat`);
      if (stat) ticks.set(`${pid}/${tid}`, Number(stat[11]) + Number(stat[12])); // utime + stime
    }
  }
  return ticks;
}

function machineTicks(): number {
  const [, user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8')
    .split('\n')[0]!
    .split(/\s+/)
    .map(Number);
  return user! + nice! + system! + irq! + softirq! + steal!;
}

type Cpu = {
  /** CPU µs per acknowledged webhook: all threads, the event loop, the other threads. */
  total: number;
  eventLoop: number;
  others: number;
  /** Percent of the machine's cores busy, and of one core used by the load generator. */
  machine: number;
  loadGenerator: number;
};

/** Runs `load` and accounts the CPU the server at `root` spent on it. */
async function accounted<T extends { '2xx': number }>(
  root: number,
  load: () => Promise<T>,
): Promise<{ result: T; cpu: Cpu | null }> {
  if (!PROC) return { result: await load(), cpu: null };
  const before = treeTicks(root);
  const machineBefore = machineTicks();
  const selfBefore = process.cpuUsage();
  const started = performance.now();
  const result = await load();
  const seconds = (performance.now() - started) / 1000;
  const self = process.cpuUsage(selfBefore);
  const machine = machineTicks() - machineBefore;
  const after = treeTicks(root);
  const spent = new Map<string, number>();
  for (const [key, t] of after) spent.set(key, t - (before.get(key) ?? 0));
  const byPid = new Map<string, number>();
  for (const [key, t] of spent) {
    const pid = key.split('/')[0]!;
    byPid.set(pid, (byPid.get(pid) ?? 0) + t);
  }
  const server = [...byPid].sort((a, b) => b[1] - a[1])[0]?.[0];
  const all = [...spent.values()].reduce((a, b) => a + b, 0);
  const main = spent.get(`${server}/${server}`) ?? 0;
  const perWebhook = (t: number) => ((t / TICKS_PER_SECOND) * 1e6) / Math.max(1, result['2xx']);
  return {
    result,
    cpu: {
      total: perWebhook(all),
      eventLoop: perWebhook(main),
      others: perWebhook(all - main),
      machine: (100 * machine) / TICKS_PER_SECOND / seconds / cpus().length,
      loadGenerator: (100 * (self.user + self.system)) / 1e6 / seconds,
    },
  };
}

type Result = {
  rps: number;
  p99: number;
  p50: number;
  ok: number;
  non2xx: number;
  errors: number;
};

/** One load of `seconds` on the server at `port`; every request has a new delivery id. */
const run = (port: number, label: string, seconds: number) =>
  webhookLoad(`http://127.0.0.1:${port}/github/webhooks`, {
    label,
    seconds,
    connections: CONNECTIONS,
    secret: SECRET,
  });

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'verdict-bench-'));
  const db = join(dir, 'verdict.sqlite');
  const verdictPort = 8791;
  const probotPort = 8792;
  const defaultPort = 8793;
  const defaultDb = join(dir, 'default.sqlite');
  console.log(
    `ingress benchmark: ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s each side, payload ${body.length} bytes`,
  );

  const verdict = startChild('src/main.ts', {
    PORT: String(verdictPort),
    HOST: '127.0.0.1',
    VERDICT_DB_PATH: db,
    GITHUB_WEBHOOK_SECRET: SECRET,
    LOG_LEVEL: 'warn',
    VERDICT_WORKER_INLINE: '0',
    APP_ID: '',
    PRIVATE_KEY: '',
  });
  // As `npm start` runs by default: the inline worker on (in its thread), the scheduler on.
  const byDefault = startChild('src/main.ts', {
    PORT: String(defaultPort),
    HOST: '127.0.0.1',
    VERDICT_DB_PATH: defaultDb,
    GITHUB_WEBHOOK_SECRET: SECRET,
    LOG_LEVEL: 'error',
    APP_ID: '',
    PRIVATE_KEY: '',
  });
  const bare = startChild('scripts/bench/bare-probot.ts', {
    PORT: String(probotPort),
    WEBHOOK_SECRET: SECRET,
  });
  await waitForPort(verdictPort, '/health');
  await waitForPort(probotPort, '/');
  await waitForPort(defaultPort, '/health');

  // Warm-up of all three, then the rounds.
  let acknowledged = (await run(verdictPort, 'verdict', 2))['2xx'];
  let acknowledgedDefault = (await run(defaultPort, 'default', 2))['2xx'];
  await run(probotPort, 'probot', 2);
  const rounds: Array<{ v: Result; p: Result; d: Result }> = [];
  const result = (r: Awaited<ReturnType<typeof run>>): Result => ({
    rps: r.requests.average,
    p99: r.latency.p99,
    p50: r.latency.p50,
    ok: r['2xx'],
    non2xx: r.non2xx,
    errors: r.errors,
  });
  const row = (name: string, r: Result) =>
    `${name.padEnd(22)} ${r.rps.toFixed(0).padStart(8)} webhooks/s   p50 ${String(r.p50).padStart(4)} ms   p99 ${String(r.p99).padStart(4)} ms   2xx ${r.ok}   non-2xx ${r.non2xx}   errors ${r.errors}`;
  const cpuRow = (name: string, c: Cpu) =>
    `${name.padEnd(22)} ${c.total.toFixed(0).padStart(4)} µs CPU per webhook (event loop ${c.eventLoop.toFixed(0)}, other threads ${c.others.toFixed(0)})   machine ${c.machine.toFixed(0)}% busy   load generator ${c.loadGenerator.toFixed(0)}% of a core`;
  const cpuRounds: Array<{ v: Cpu; p: Cpu }> = [];
  for (let i = 1; i <= ROUNDS; i++) {
    signalTree(byDefault.pid!, 'SIGSTOP');
    const vr = await accounted(verdict.pid!, () => run(verdictPort, 'verdict', SECONDS));
    const v = result(vr.result);
    acknowledged += v.ok;
    signalTree(byDefault.pid!, 'SIGCONT');
    const dr = await accounted(byDefault.pid!, () => run(defaultPort, 'default', SECONDS));
    const d = result(dr.result);
    acknowledgedDefault += d.ok;
    signalTree(byDefault.pid!, 'SIGSTOP');
    const pr = await accounted(bare.pid!, () => run(probotPort, 'probot', SECONDS));
    const p = result(pr.result);
    rounds.push({ v, p, d });
    console.log(row(`round ${i}: verdict`, v));
    console.log(row(`round ${i}: default set-up`, d));
    console.log(row(`round ${i}: bare probot`, p));
    if (vr.cpu && pr.cpu) {
      cpuRounds.push({ v: vr.cpu, p: pr.cpu });
      console.log(cpuRow(`round ${i}: verdict`, vr.cpu));
      console.log(cpuRow(`round ${i}: bare probot`, pr.cpu));
    }
    console.log(`round ${i}: ratio ${(v.rps / p.rps).toFixed(2)}x`);
  }
  signalTree(byDefault.pid!, 'SIGCONT');
  await stopChild(verdict);
  await stopChild(bare);
  // The default set-up goes on processing its backlog: wait until nothing is queued. The check is that every
  // delivery is processed, not how fast a backlog of several minutes' intake drains; the wait gives up only
  // when no delivery was processed for 60 s (stuck), and the drain rate is printed.
  const backlogStarted = Date.now();
  const dk = knexFactory({
    client: 'better-sqlite3',
    connection: { filename: defaultDb },
    useNullAsDefault: true,
  });
  const queuedLeft = async () =>
    Number((await dk('deliveries').where('status', 'queued').count({ n: '*' }))[0]!.n);
  const backlogAtEnd = await queuedLeft();
  let left = backlogAtEnd;
  let progressAt = Date.now();
  while (left > 0 && Date.now() - progressAt < 60_000) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = await queuedLeft();
    if (now < left) progressAt = Date.now();
    left = now;
  }
  const backlogSeconds = (Date.now() - backlogStarted) / 1000;
  await stopChild(byDefault);
  const storedDefault = Number((await dk('deliveries').count({ n: '*' }))[0]!.n);
  const unprocessed = await queuedLeft();
  await dk.destroy();

  const k = knexFactory({ client: 'better-sqlite3', connection: { filename: db }, useNullAsDefault: true });
  const stored = Number((await k('deliveries').count({ n: '*' }))[0]!.n);
  const jobs = Number((await k('jobs').count({ n: '*' }))[0]!.n);
  await k.destroy();
  rmSync(dir, { recursive: true, force: true });

  const summary = (side: 'v' | 'p' | 'd') => ({
    rps: median(rounds.map((r) => r[side].rps)),
    p99: median(rounds.map((r) => r[side].p99)),
  });
  const v = summary('v');
  const p = summary('p');
  const d = summary('d');
  console.log(
    `median verdict (SQLite)   ${v.rps.toFixed(0).padStart(8)} webhooks/s   p99 ${String(v.p99).padStart(4)} ms`,
  );
  console.log(
    `median default set-up     ${d.rps.toFixed(0).padStart(8)} webhooks/s   p99 ${String(d.p99).padStart(4)} ms`,
  );
  console.log(
    `median bare probot        ${p.rps.toFixed(0).padStart(8)} webhooks/s   p99 ${String(p.p99).padStart(4)} ms`,
  );
  console.log(
    `ratio verdict / bare probot: ${(v.rps / p.rps).toFixed(2)}x (median of rounds: ${median(rounds.map((r) => r.v.rps / r.p.rps)).toFixed(2)}x)`,
  );
  if (cpuRounds.length > 0) {
    const cpuMedian = (side: 'v' | 'p', key: 'total' | 'eventLoop' | 'others') =>
      median(cpuRounds.map((c) => c[side][key])).toFixed(0);
    for (const [side, name] of [
      ['v', 'verdict (SQLite)'],
      ['p', 'bare probot'],
    ] as const) {
      console.log(
        `median CPU per webhook, ${name.padEnd(17)} ${cpuMedian(side, 'total').padStart(4)} µs (event loop ${cpuMedian(side, 'eventLoop')}, other threads ${cpuMedian(side, 'others')})`,
      );
    }
  }
  // Requests still in flight when autocannon stops may be stored without their answer being counted, so
  // stored >= acknowledged; every stored delivery must have its job.
  const durable = stored >= acknowledged && jobs === stored;
  console.log(
    `durability: ${acknowledged} deliveries acknowledged (warm-up included), ${stored} stored, ${jobs} jobs enqueued: ` +
      (durable ? 'every acknowledged delivery is stored, every stored one enqueued' : 'MISMATCH'),
  );
  if (!durable) process.exitCode = 1;
  const processedAll = storedDefault >= acknowledgedDefault && unprocessed === 0;
  console.log(
    `default set-up: ${acknowledgedDefault} acknowledged, ${storedDefault} stored; ${backlogAtEnd} queued when the load ended, ${unprocessed} left unprocessed ${backlogSeconds.toFixed(0)} s later (${((backlogAtEnd - unprocessed) / backlogSeconds).toFixed(0)} deliveries/s processed)`,
  );
  const defaultRatio = d.rps / p.rps;
  const defaultMet = defaultRatio >= 0.5 && d.p99 <= 250 && processedAll;
  console.log(
    `default set-up (npm start, worker on): ${defaultRatio.toFixed(2)}x of bare Probot, p99 ${d.p99} ms, ${processedAll ? 'every delivery stored and processed' : 'deliveries MISSING or UNPROCESSED'} (target at least 0.50x, p99 at most 250 ms): ${defaultMet ? 'met' : 'missed'}`,
  );
  if (!processedAll) process.exitCode = 1;
  const ratio = v.rps / p.rps;
  const met = ratio >= 0.8 && durable && defaultMet;
  console.log(
    `bench:ingress: ingress only ${ratio.toFixed(2)}x of bare Probot, ${durable ? 'every acknowledged delivery stored' : 'acknowledged deliveries MISSING'}; default set-up ${defaultRatio.toFixed(2)}x, p99 ${d.p99} ms (targets at least 0.80x; at least 0.50x and p99 at most 250 ms, every delivery processed): ${met ? 'met' : 'missed'}`,
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
