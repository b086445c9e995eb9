import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { BuildReport } from '../../scripts/container/build-steps.js';

/**
 * The container image and the compose file, verified without Docker (issue 33, item 7):
 * scripts/container/build-steps.ts performs the Dockerfile's steps here (npm offline against this
 * machine's cache) and runs the image's command as its user; docker-compose (Debian's, installed by
 * .ci/run) validates compose.yaml, which needs no Docker daemon.
 */

const ROOT = process.cwd();
const SCRIPT = path.join(ROOT, 'scripts/container/build-steps.ts');
type Result = { code: number | null; stdout: string; stderr: string };

function run(cmd: string, args: string[], o: { cwd?: string; timeout: number }): Promise<Result> {
  return new Promise((resolve) => {
    execFile(
      cmd,
      args,
      {
        cwd: o.cwd ?? ROOT,
        env: { PATH: process.env.PATH, HOME: process.env.HOME },
        timeout: o.timeout,
        maxBuffer: 20 * 2 ** 20,
      },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
    );
  });
}

function buildSteps(args: string[], timeout: number): Promise<Result> {
  return run(process.execPath, ['--import', 'tsx', SCRIPT, ...args], { timeout });
}

function onPath(name: string): boolean {
  return (process.env.PATH ?? '').split(':').some((dir) => dir !== '' && fs.existsSync(path.join(dir, name)));
}

let work: string;
beforeEach(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-container-it-'));
});
afterEach(() => {
  fs.rmSync(work, { recursive: true, force: true });
});

// The image's steps run as root and its server as uid 1000, which needs root here; CI runs as root.
const asRoot = process.getuid?.() === 0 || process.env.CI ? describe : describe.skip;

asRoot('the image built by its Dockerfile steps, without Docker', () => {
  it('builds all stages offline, runs as uid 1000 and answers /health and its HEALTHCHECK', async () => {
    const reportFile = path.join(work, 'report.json');
    const result = await buildSteps(['--report', reportFile], 290_000);
    expect([result.code, result.stdout.trim().split('\n').at(-1)]).toEqual([
      0,
      expect.stringMatching(/build-steps: ok$/),
    ]);
    const report = JSON.parse(fs.readFileSync(reportFile, 'utf8')) as BuildReport;
    expect(report.ok).toBe(true);
    expect(report.stages.map((s) => s.name)).toEqual(['web', 'deps', 'runtime']);
    expect(report.image).toMatchObject({
      user: '1000:1000',
      workdir: '/app',
      volumes: ['/app/data'],
      expose: ['8787'],
    });
    const r = report.run!;
    expect(r.uid).toBe(1000);
    expect(r.health).toEqual({ status: 200, body: { ok: true, service: 'verdict' } });
    expect(r.healthcheckExitCode).toBe(0);
    // The dashboard's build reached the runtime stage from the builder stage.
    expect(r.dashboard).toEqual({ page: 200, asset: 200 });
    // The SQLite store was created in the volume by the image's user.
    expect(r.volumeFiles).toContainEqual({ path: '/app/data/verdict.sqlite', uid: 1000 });
    // compose.yaml's worker command starts from the same image with production dependencies only.
    expect(r.worker).toMatchObject({
      command: ['node', '--import', 'tsx', 'src/worker/main.ts'],
      started: true,
      exitCode: 0,
    });
    expect(r.server).toMatchObject({ signal: 'SIGTERM', exitCode: 0 });
    expect(r.server.stopMs).toBeLessThan(10_000);
  }, 300_000);

  describe('a Dockerfile the steps catch as broken (a small context, no npm)', () => {
    const SERVER = `import http from 'node:http';
import fs from 'node:fs';
fs.writeFileSync('data/started', String(process.pid));
const server = http.createServer((req, res) => {
  if (req.url === '/health') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  if (req.url === '/operator/login') return res.writeHead(200).end('<script src="/operator/assets/a.js"></script>');
  if (req.url === '/operator/assets/a.js') return res.writeHead(200).end('1');
  res.writeHead(404).end();
});
server.listen(Number(process.env.PORT), process.env.HOST);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;
    const DOCKERFILE = [
      'FROM node:20-slim AS runtime',
      'WORKDIR /app',
      'COPY server.mjs ./',
      'RUN mkdir -p data && chown 1000:1000 data',
      'USER 1000:1000',
      'VOLUME /app/data',
      `HEALTHCHECK --timeout=5s CMD ["node", "-e", "fetch('http://127.0.0.1:' + process.env.PORT + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]`,
      'CMD ["node", "server.mjs"]',
    ].join('\n');

    async function attempt(dockerfile: string, dockerignore = ''): Promise<Result & { report: BuildReport }> {
      fs.writeFileSync(path.join(work, 'server.mjs'), SERVER);
      fs.writeFileSync(path.join(work, 'Dockerfile'), dockerfile);
      fs.writeFileSync(path.join(work, '.dockerignore'), dockerignore);
      const reportFile = path.join(work, 'report.json');
      const result = await buildSteps(
        ['--context', work, '--compose', path.join(work, 'no-compose.yaml'), '--report', reportFile],
        60_000,
      );
      return { ...result, report: JSON.parse(fs.readFileSync(reportFile, 'utf8')) as BuildReport };
    }

    it('passes as written: the server runs as uid 1000 and writes to its volume', async () => {
      const r = await attempt(DOCKERFILE);
      expect([r.code, r.report.error]).toEqual([0, undefined]);
      expect(r.report.run).toMatchObject({ uid: 1000, healthcheckExitCode: 0, worker: null });
      expect(r.report.run!.volumeFiles).toEqual([{ path: '/app/data/started', uid: 1000 }]);
    }, 60_000);

    it('fails on a RUN that fails, naming its line', async () => {
      const r = await attempt(DOCKERFILE.replace('RUN mkdir', 'RUN node -e "process.exit(3)"\nRUN mkdir'));
      expect(r.code).toBe(1);
      expect(r.report.error).toMatch(
        /^Dockerfile line 4 \(runtime: RUN node -e "process.exit\(3\)"\): exited 3/,
      );
    }, 60_000);

    it('fails on a COPY of a file .dockerignore leaves out of the context', async () => {
      const r = await attempt(DOCKERFILE, 'server.mjs\n');
      expect(r.code).toBe(1);
      expect(r.report.error).toMatch(
        /line 3 .*server\.mjs: not found in the build context \(\.dockerignore excludes it\)/,
      );
    }, 60_000);

    it("fails when the volume's directory does not belong to the image's user", async () => {
      const r = await attempt(DOCKERFILE.replace(' && chown 1000:1000 data', ''));
      expect(r.code).toBe(1);
      expect(r.report.error).toMatch(
        /VOLUME \/app\/data belongs to uid 0 in the image, not to the USER \(1000\)/,
      );
    }, 60_000);

    it('fails when the HEALTHCHECK command does not pass against the running server', async () => {
      const r = await attempt(DOCKERFILE.replace("'/health'", "'/healthz'"));
      expect(r.code).toBe(1);
      expect(r.report.error).toMatch(/the HEALTHCHECK command exited 1/);
    }, 60_000);

    it('fails on an instruction it cannot follow instead of skipping it', async () => {
      const r = await attempt(DOCKERFILE.replace('COPY server.mjs ./', 'ADD server.mjs ./'));
      expect(r.code).toBe(1);
      expect(r.report.error).toMatch(/line 3: ADD is not supported/);
    }, 60_000);
  });
});

// Debian's docker-compose validates without a daemon; CI installs it (.ci/run).
const withCompose = onPath('docker-compose') || process.env.CI ? describe : describe.skip;

withCompose('compose.yaml, validated by docker-compose config', () => {
  function project(env: string, compose = fs.readFileSync(path.join(ROOT, 'compose.yaml'), 'utf8')): void {
    fs.writeFileSync(path.join(work, 'compose.yaml'), compose);
    fs.copyFileSync(path.join(ROOT, 'Dockerfile'), path.join(work, 'Dockerfile'));
    fs.writeFileSync(path.join(work, '.env'), env);
  }
  const config = (...args: string[]) =>
    run('docker-compose', ['-f', 'compose.yaml', 'config', ...args], { cwd: work, timeout: 60_000 });

  it('is valid, and resolves to a server without an inline worker and a worker on the same PostgreSQL', async () => {
    project('POSTGRES_PASSWORD=example-password\n');
    const quiet = await config('-q');
    expect([quiet.code, quiet.stderr]).toEqual([0, '']);
    const resolved = parseYaml((await config()).stdout) as {
      services: Record<
        string,
        { environment: Record<string, string>; command?: string[]; depends_on: object }
      >;
    };
    const url = 'postgres://verdict:example-password@postgres:5432/verdict';
    expect(resolved.services.verdict!.environment).toMatchObject({
      DATABASE_URL: url,
      VERDICT_WORKER_INLINE: '0',
    });
    expect(resolved.services.worker!.environment).toMatchObject({ DATABASE_URL: url });
    expect(resolved.services.worker!.environment.VERDICT_WORKER_INLINE).toBeUndefined();
    expect(resolved.services.postgres!.environment).toMatchObject({ POSTGRES_PASSWORD: 'example-password' });
  }, 60_000);

  it('refuses to start without POSTGRES_PASSWORD in .env', async () => {
    project('');
    const r = await config('-q');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/set POSTGRES_PASSWORD in \.env/);
  }, 60_000);

  it('catches a broken file (the validation is real)', async () => {
    const compose = fs.readFileSync(path.join(ROOT, 'compose.yaml'), 'utf8');
    project(
      'POSTGRES_PASSWORD=x\n',
      compose.replace(/depends_on:\n(\s+)verdict:/, 'depends_on:\n$1verdikt:'),
    );
    const undefinedService = await config('-q');
    expect(undefinedService.code).not.toBe(0);
    expect(undefinedService.stderr).toMatch(/depends on service 'verdikt' which is undefined/);
    project('POSTGRES_PASSWORD=x\n', compose.replace('stop_grace_period: 40s', 'stop_grace_perio: 40s'));
    const unknownKey = await config('-q');
    expect(unknownKey.code).not.toBe(0);
    expect(unknownKey.stderr).toMatch(/Unsupported config option for services\.worker: 'stop_grace_perio'/);
  }, 60_000);
});
