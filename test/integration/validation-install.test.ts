/**
 * The bubblewrap executor's dependency install step against a registry this test serves on 127.0.0.1 (no
 * internet): `npm ci` installs a dependency with the network on, then the test command runs without it;
 * a lockfile reaching elsewhere is refused; a failing or hanging registry gives the install's own outcome;
 * the install sandbox writes nowhere but the scratch copy.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import {
  bwrapArgs,
  createBubblewrapExecutor,
  findBinary,
  INSTALL_ARTIFACT_ID,
  installEnv,
  OFFLINE_NOTE,
  runProcess,
  type BubblewrapOptions,
} from '../../src/validation/bubblewrap.js';
import { refusedNote } from '../../src/validation/install.js';
import { planValidation } from '../../src/validation/plan.js';
import type { ValidationOutcome } from '../../src/validation/types.js';

const FIXTURE = path.resolve('fixtures/validation/with-dependency');
const DEP = 'verdict-tiny-dep';
const haveBwrap = findBinary('bwrap') !== undefined;
const maybe = haveBwrap || process.env.CI ? describe : describe.skip;

// --- A tarball made by hand: ustar headers, gzip. ---------------------------------------------------------

function tarEntry(name: string, body: Buffer): Buffer {
  const h = Buffer.alloc(512);
  h.write(name, 0, 100, 'utf8');
  h.write('0000644\0', 100);
  h.write('0000000\0', 108);
  h.write('0000000\0', 116);
  h.write(`${body.length.toString(8).padStart(11, '0')}\0`, 124);
  h.write(`${Math.floor(Date.UTC(2024, 0, 1) / 1000).toString(8)}\0`, 136);
  h.fill(' ', 148, 156); // the checksum counts its own field as spaces
  h.write('0', 156);
  h.write('ustar\0', 257);
  h.write('00', 263);
  const sum = h.reduce((a, b) => a + b, 0);
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  return Buffer.concat([h, body, Buffer.alloc((512 - (body.length % 512)) % 512)]);
}

function tgz(files: Record<string, string>): Buffer {
  const entries = Object.entries(files).map(([n, t]) => tarEntry(`package/${n}`, Buffer.from(t)));
  return zlib.gzipSync(Buffer.concat([...entries, Buffer.alloc(1024)]));
}

const tarball = tgz({
  'package.json': JSON.stringify({
    name: DEP,
    version: '1.0.0',
    main: 'index.js',
    // Must never run: the install step passes --ignore-scripts.
    scripts: { postinstall: "node -e \"require('fs').writeFileSync('/workspace/dep-postinstall-ran', '')\"" },
  }),
  'index.js': 'exports.double = (n) => n * 2;\n',
});
const integrity = `sha512-${crypto.createHash('sha512').update(tarball).digest('base64')}`;
const shasum = crypto.createHash('sha1').update(tarball).digest('hex');

// --- The registry. -----------------------------------------------------------------------------------------

type Mode = 'ok' | '404' | '500';
let server: http.Server;
let registry: string;
let mode: Mode = 'ok';
let requests: string[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    if (mode !== 'ok') {
      res.writeHead(Number(mode), { 'content-type': 'application/json' });
      res.end('{"error":"nope"}');
      return;
    }
    const tarPath = `/${DEP}/-/${DEP}-1.0.0.tgz`;
    if (req.url === tarPath) {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': tarball.length });
      res.end(tarball);
    } else if (req.url === `/${DEP}`) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          name: DEP,
          'dist-tags': { latest: '1.0.0' },
          versions: {
            '1.0.0': {
              name: DEP,
              version: '1.0.0',
              dist: { tarball: `${registry}${tarPath.slice(1)}`, integrity, shasum },
            },
          },
        }),
      );
    } else {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":"not found"}');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  registry = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

let work: string;
beforeEach(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-install-it-'));
  mode = 'ok';
  requests = [];
});
afterEach(() => fs.rmSync(work, { recursive: true, force: true }));

/** The fixture with a lockfile resolving the dependency from the test registry (plus `extra` entries). */
function project(extra: Record<string, object> = {}): string {
  const dir = path.join(work, 'checkout');
  fs.cpSync(FIXTURE, dir, { recursive: true });
  const { port } = server.address() as net.AddressInfo;
  fs.writeFileSync(path.join(dir, 'target.json'), JSON.stringify({ host: '127.0.0.1', port }));
  const lock = {
    name: 'verdict-fixture-with-dependency',
    version: '1.0.0',
    lockfileVersion: 3,
    requires: true,
    packages: {
      '': {
        name: 'verdict-fixture-with-dependency',
        version: '1.0.0',
        hasInstallScript: true,
        dependencies: { [DEP]: '1.0.0' },
      },
      [`node_modules/${DEP}`]: {
        version: '1.0.0',
        resolved: `${registry}${DEP}/-/${DEP}-1.0.0.tgz`,
        integrity,
        hasInstallScript: true,
      },
      ...extra,
    },
  };
  fs.writeFileSync(path.join(dir, 'package-lock.json'), `${JSON.stringify(lock, null, 2)}\n`);
  return dir;
}

async function run(dir: string, o: BubblewrapOptions, timeoutMs = 60000): Promise<ValidationOutcome> {
  return createBubblewrapExecutor(o).run(planValidation({ dir }, ['index.js']), dir, { timeoutMs });
}

const tarballRequests = () => requests.filter((r) => r.endsWith('.tgz'));

maybe('bubblewrap dependency install step', () => {
  it('installs from the registry with the network on, then the test runs with it off', async () => {
    const dir = project();
    // A committed .npmrc pointing npm at a dead registry and proxy: hidden from the install, put back after.
    fs.writeFileSync(path.join(dir, '.npmrc'), 'registry=http://127.0.0.1:9/\nproxy=http://127.0.0.1:9/\n');
    let scratch = '';
    const out = await run(dir, {
      install: { mode: 'registry', registry },
      keepScratch: true,
      onScratch: (s) => (scratch = s),
    });
    try {
      expect(out.install).toMatchObject({
        result: 'installed',
        packageManager: 'npm',
        registry,
        exitCode: 0,
      });
      expect(out.install!.command).toBe(
        `npm ci --ignore-scripts --no-audit --no-fund --registry ${registry}`,
      );
      expect(out.note).toBe(
        `installed: npm ci from ${registry} (lifecycle scripts off); commands ran offline`,
      );
      expect(tarballRequests()).toEqual([`GET /${DEP}/-/${DEP}-1.0.0.tgz`]);
      const afterInstall = requests.length;
      expect(out.status).toBe('passed');
      expect(out.evidence).toBe('PASSED bubblewrap: npm run test');
      expect(out.commands[0]!.outputTail).toMatch(/# pass 2/);
      expect(out.commands[0]!.outputTail).toMatch(/REGISTRY FROM TEST: (ECONNREFUSED|ENETUNREACH)/);
      expect(requests.length).toBe(afterInstall); // the test command reached nothing
      expect(out.artifacts.map((a) => a.id)).toEqual([INSTALL_ARTIFACT_ID, 'bubblewrap-1-test']);
      expect(out.artifacts[0]!.content).toMatch(/added 1 package/);
      // Installed in the scratch copy only; no lifecycle script ran; the .npmrc is back for the commands.
      expect(fs.existsSync(path.join(scratch, 'node_modules', DEP, 'index.js'))).toBe(true);
      expect(fs.existsSync(path.join(scratch, 'dep-postinstall-ran'))).toBe(false);
      expect(fs.existsSync(path.join(scratch, 'root-preinstall-ran'))).toBe(false);
      expect(fs.readFileSync(path.join(scratch, '.npmrc'), 'utf8')).toMatch(
        /^registry=http:\/\/127\.0\.0\.1:9\//,
      );
      expect(fs.existsSync(path.join(dir, 'node_modules'))).toBe(false);
    } finally {
      fs.rmSync(path.dirname(scratch), { recursive: true, force: true });
    }
  }, 90000);

  it('install off: no install, today’s offline behaviour (the dependency is missing)', async () => {
    const out = await run(project(), {});
    expect(out.install).toBeUndefined();
    expect(out.note).toBe(OFFLINE_NOTE);
    expect(out.status).toBe('failed');
    expect(out.evidence).toBe('FAILED bubblewrap: npm run test (exit 1)');
    expect(out.commands[0]!.outputTail).toMatch(
      /Cannot find package 'verdict-tiny-dep'|ERR_MODULE_NOT_FOUND/,
    );
    expect(requests).toEqual([]);
    expect(out.artifacts.map((a) => a.id)).toEqual(['bubblewrap-1-test']);
  }, 60000);

  it('a lockfile resolving outside the registry is refused; the commands still run, offline', async () => {
    const dir = project({
      'node_modules/evil-git': { version: '1.0.0', resolved: 'git+ssh://git@github.com/evil/evil.git#abc' },
      'node_modules/evil-host': {
        version: '1.0.0',
        resolved: `http://127.0.0.1.evil.example/${DEP}/-/${DEP}-1.0.0.tgz`,
        integrity,
      },
    });
    const out = await run(dir, { install: { mode: 'registry', registry } });
    expect(out.note).toBe(refusedNote(2, registry));
    expect(out.note).toBe(
      `install refused: 2 dependencies resolve outside ${registry}; commands ran offline`,
    );
    expect(out.install).toMatchObject({ result: 'refused', registry });
    expect(out.install!.outside).toEqual([
      'node_modules/evil-git: git+ssh://git@github.com/evil/evil.git#abc',
      `node_modules/evil-host: http://127.0.0.1.evil.example/${DEP}/-/${DEP}-1.0.0.tgz`,
    ]);
    expect(requests).toEqual([]); // npm never ran
    expect(out.commands).toHaveLength(1);
    expect(out.status).toBe('failed');
    expect(out.commands[0]!.outputTail).toMatch(/ERR_MODULE_NOT_FOUND|Cannot find package/);
  }, 60000);

  it('the registry answers 404: a failed install, distinct from a test failure, and no command runs', async () => {
    mode = '404';
    const out = await run(project(), { install: { mode: 'registry', registry } });
    expect(out.status).toBe('error');
    expect(out.evidence).toMatch(
      /^FAILED bubblewrap: dependency install \(npm ci\) exit [1-9]\d*; not run: npm run test$/,
    );
    expect(out.install).toMatchObject({ result: 'failed' });
    expect(out.install!.exitCode).not.toBe(0);
    expect(out.note).toMatch(
      /^install failed: npm ci from http:\/\/127\.0\.0\.1:\d+\/ exit \d+; commands not run$/,
    );
    expect(out.commands).toEqual([]);
    expect(tarballRequests().length).toBeGreaterThanOrEqual(1);
    expect(out.artifacts).toHaveLength(1);
    expect(out.artifacts[0]).toMatchObject({ id: INSTALL_ARTIFACT_ID, kind: 'command_output' });
    expect(out.artifacts[0]!.content).toMatch(/404/);
  }, 60000);

  it('the registry answers 500 (npm retries): the install is killed at its own time limit', async () => {
    mode = '500';
    const started = Date.now();
    const out = await run(project(), { install: { mode: 'registry', registry, timeoutMs: 4000 } });
    expect(out.status).toBe('timed_out');
    expect(out.evidence).toBe(
      'TIMED OUT bubblewrap: dependency install (npm ci) (process tree killed at the time limit); not run: npm run test',
    );
    expect(out.install).toMatchObject({ result: 'timed_out' });
    expect(out.commands).toEqual([]);
    expect(requests.length).toBeGreaterThanOrEqual(1);
    expect(Date.now() - started).toBeLessThan(30000);
    // No npm of this install is left.
    const port = String((server.address() as net.AddressInfo).port);
    const left = () =>
      execFileSync('ps', ['-eo', 'args='], { encoding: 'utf8' })
        .split('\n')
        .filter((l) => l.includes(`127.0.0.1:${port}`) && l.includes('npm'));
    const end = Date.now() + 5000;
    while (left().length > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
    expect(left()).toEqual([]);
  }, 60000);

  it('abort during the install: cancelled, the install tree killed, no command run', async () => {
    mode = '500';
    const ctl = new AbortController();
    const dir = project();
    const running = createBubblewrapExecutor({ install: { mode: 'registry', registry } }).run(
      planValidation({ dir }, ['index.js']),
      dir,
      { timeoutMs: 60000, signal: ctl.signal },
    );
    const end = Date.now() + 15000;
    while (requests.length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    expect(requests.length).toBeGreaterThan(0);
    ctl.abort();
    const out = await running;
    expect(out.status).toBe('not_run');
    expect(out.evidence).toBe('NOT RUN bubblewrap: cancelled (process tree killed); not run: npm run test');
    expect(out.commands).toEqual([]);
  }, 60000);

  it('the install sandbox shares the network but writes nowhere outside the scratch copy', async () => {
    const scratch = fs.mkdtempSync(path.join(work, 'scratch-'));
    const hostDir = fs.mkdtempSync(path.join(work, 'host-'));
    const targets = [
      '/etc/verdict-install-escape',
      '/usr/verdict-install-escape',
      path.join(hostDir, 'escape'),
      path.join(os.homedir(), 'verdict-install-escape'),
    ];
    const { port } = server.address() as net.AddressInfo;
    const script = [
      ...targets.map((t) => `(echo x > ${t}) 2>/dev/null && echo WROTE ${t} || echo BLOCKED ${t}`),
      'echo inside > /workspace/inside.txt',
      // http.get, not fetch: undici's WebAssembly parser does not start under the 4 GiB address-space limit.
      `node -e "require('http').get('http://127.0.0.1:${port}/${DEP}', (r) => console.log('REGISTRY', r.statusCode)).on('error', (e) => console.log('NO NETWORK', e.code))"`,
      'echo "USERCONFIG=$npm_config_userconfig GLOBALCONFIG=$npm_config_globalconfig IGNORE_SCRIPTS=$npm_config_ignore_scripts"',
    ].join('; ');
    const cmd = { check: 'build' as const, ecosystem: 'javascript' as const, argv: ['sh', '-c', script] };
    const limits = { dataBytes: 4 * 1024 ** 3, cpuSeconds: 60, fileSizeBytes: 1024 ** 3 };
    const probe = (args: string[]) => runProcess(findBinary('bwrap')!, args, cmd, 20000, 64 * 1024);
    const args = bwrapArgs(scratch, cmd, {}, limits, { network: true, env: installEnv({}, registry) });
    expect(args).not.toContain('--unshare-net');
    const r = await probe(args);
    expect(r.exitCode).toBe(0);
    for (const t of targets) {
      expect(r.outputTail).toContain(`BLOCKED ${t}`);
      expect(fs.existsSync(t)).toBe(false);
    }
    expect(r.outputTail).toMatch(/REGISTRY 200/);
    expect(r.outputTail).toContain(
      'USERCONFIG=/dev/null GLOBALCONFIG=/tmp/no-global-npmrc IGNORE_SCRIPTS=true',
    );
    expect(fs.readFileSync(path.join(scratch, 'inside.txt'), 'utf8')).toBe('inside\n');
    // The same probe in the commands' sandbox has no network.
    const offline = await probe(bwrapArgs(scratch, cmd, {}, limits));
    expect(offline.outputTail).toMatch(/NO NETWORK (ECONNREFUSED|ENETUNREACH)/);
  }, 60000);
});
