import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import {
  containerErrorSchema,
  containerHealthSchema,
  stateFlushSchema,
} from '../../../src/native/protocol.js';
import type { FakeGitHub } from '../../helpers/fake-github.js';
import { freePort } from '../../helpers/net.js';
import { eventually } from '../../helpers/webhooks.js';
import { FakeInternal, FakeModel, containerTestEnv, fakeGitHub, reviewRequest, seedBundle } from './fakes.js';

/** The container as its own process (`src/native/container/main.ts`), as the Dockerfile runs it. */
class ContainerProcess {
  readonly child: ChildProcess;
  log = '';
  readonly exited: Promise<number | null>;

  constructor(env: Record<string, string>) {
    this.child = spawn(
      process.execPath,
      ['--import', 'tsx', join(process.cwd(), 'src/native/container/main.ts')],
      { env: { PATH: process.env.PATH, NODE_OPTIONS: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.child.stdout!.on('data', (d: Buffer) => (this.log += d.toString()));
    this.child.stderr!.on('data', (d: Buffer) => (this.log += d.toString()));
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }
}

describe('native review container process', () => {
  const processes: ContainerProcess[] = [];
  afterEach(async () => {
    for (const p of processes.splice(0)) await p.stop();
  });

  it('exits non-zero at start without any model API key (review-engine 5.5 startup guard)', async () => {
    const p = new ContainerProcess({ VERDICT_MODEL_PROVIDER: 'openai', VERDICT_OPENAI_API_KEY: ' ' });
    processes.push(p);
    expect(await p.exited).toBe(1);
    expect(p.log).toContain('review provider openai selected but no model API key in env');
  });

  it('on SIGTERM: stops taking reviews, aborts the running one, flushes a checkpoint and exits', async () => {
    const { bundle, run } = await seedBundle();
    const internal = new FakeInternal(bundle);
    const model = new FakeModel();
    let github: FakeGitHub | null = null;
    try {
      const origin = await internal.listen();
      const modelUrl = await model.listen();
      github = fakeGitHub();
      await github.listen();
      model.gate = new Promise(() => undefined); // the model never answers
      const port = await freePort();
      const p = new ContainerProcess({
        ...containerTestEnv(modelUrl, github),
        PORT: String(port),
        VERDICT_INTERNAL_ORIGIN: origin,
        VERDICT_PUBLISH_MODE: 'live',
        VERDICT_CONTAINER_PHASE_LOG_MS: '50',
      });
      processes.push(p);
      const base = `http://127.0.0.1:${port}`;
      const health = async () => {
        const res = await fetch(`${base}/health`).catch(() => null);
        return res ? containerHealthSchema.parse(await res.json()) : null;
      };
      expect(await eventually(health, 20_000)).toEqual({ ok: true, phase: 'idle', runId: null });
      const answer = fetch(`${base}/review`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(reviewRequest(run)),
      });
      await eventually(async () => model.reviewCalls > 0, 20_000);
      expect(await health()).toEqual({ ok: true, phase: 'reviewing', runId: run.id });
      await eventually(async () => p.log.includes('"event":"container-phase"'), 10_000);

      p.child.kill('SIGTERM');
      const res = await answer;
      expect(res.status).toBe(503);
      expect(containerErrorSchema.parse(await res.json()).error.code).toBe('container_stopping');
      expect(await p.exited).toBe(0);
      expect(internal.flushes).toHaveLength(1);
      const checkpoint = stateFlushSchema.parse(internal.flushes[0]);
      expect(checkpoint).toMatchObject({ runId: run.id, leaseToken: 'lease-token-1', final: false });
      expect(checkpoint.tables.runs!.upsert).toEqual([expect.objectContaining({ id: run.id })]);
      // Every internal request named its host for the local origin.
      expect(new Set(internal.calls.map((c) => `${c.host}${c.path}`))).toEqual(
        new Set(['state.internal/bundle', 'broker.internal/token', 'state.internal/flush']),
      );
      expect(p.log).toContain('"event":"container-checkpoint"');
    } finally {
      await internal.close();
      await model.close();
      await github?.close();
    }
  });
});
