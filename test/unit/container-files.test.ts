import { readFileSync } from 'node:fs';
import { parseDocument } from 'yaml';
import {
  dockerignore,
  durationMs,
  parseDockerfile,
  parseEnv,
  substitute,
  type Stage,
} from '../../scripts/container/dockerfile.js';

/**
 * The reader scripts/container/build-steps.ts builds the image with (Dockerfile subset, .dockerignore),
 * and what issue 33 asks of the Dockerfile and compose.yaml themselves.
 */

describe('parseDockerfile', () => {
  it('splits stages, joins continuations, drops comments and reads flags and exec forms', () => {
    const stages = parseDockerfile(
      [
        '# syntax=docker/dockerfile:1',
        'FROM node:20-slim AS build',
        'WORKDIR /app',
        'RUN echo a \\',
        '  # a comment inside the continuation',
        '  && echo b',
        'FROM node:20-slim',
        'COPY --from=build --chown=1000:1000 /app/out ./out',
        'HEALTHCHECK --interval=30s --timeout=5s CMD ["node", "-e", "1"]',
        'CMD ["node", "main.js"]',
      ].join('\n'),
    );
    expect(stages.map((s) => [s.name, s.base])).toEqual([
      ['build', 'node:20-slim'],
      [null, 'node:20-slim'],
    ]);
    const run = stages[0]!.instructions[1]!;
    expect(run).toMatchObject({ keyword: 'RUN', line: 4, exec: null });
    expect(run.args.replace(/\s+/g, ' ')).toBe('echo a && echo b');
    const [copy, health, cmd] = stages[1]!.instructions;
    expect(copy).toMatchObject({ flags: { from: 'build', chown: '1000:1000' }, args: '/app/out ./out' });
    expect(health).toMatchObject({ flags: { interval: '30s', timeout: '5s' }, exec: ['node', '-e', '1'] });
    expect(cmd!.exec).toEqual(['node', 'main.js']);
  });

  it('refuses what the emulation cannot follow, naming the line', () => {
    expect(() => parseDockerfile('FROM node:20\nADD x /x\n')).toThrow(/line 2: ADD is not supported/);
    expect(() => parseDockerfile('FROM node:20\nRUN --mount=type=cache,target=/x npm ci\n')).toThrow(
      /line 2: RUN --mount is not supported/,
    );
    expect(() => parseDockerfile('FROM node:20\nCOPY --link a b\n')).toThrow(/line 2: COPY --link/);
    expect(() => parseDockerfile('WORKDIR /app\n')).toThrow(/before the first FROM/);
    expect(() => parseDockerfile('FROM node:20\nCMD [node, x]\n')).toThrow(/JSON array of strings/);
    expect(() => parseDockerfile('FROM node:20\nHEALTHCHECK node x\n')).toThrow(/HEALTHCHECK \[flags\] CMD/);
  });

  it('reads ENV pairs with quotes and substitutions, and durations', () => {
    expect(parseEnv('A=1 B="two words" C=$A-x D=${A}y', { A: 'old' })).toEqual([
      ['A', '1'],
      ['B', 'two words'],
      ['C', 'old-x'],
      ['D', 'oldy'],
    ]);
    expect(() => parseEnv('LEGACY value', {})).toThrow(/KEY=value/);
    expect(substitute('${HOME}/x/$USER', { HOME: '/h' })).toBe('/h/x/');
    expect(durationMs('1m30s')).toBe(90_000);
    expect(durationMs('500ms')).toBe(500);
    expect(() => durationMs('often')).toThrow(/not a duration/);
  });
});

describe('dockerignore', () => {
  const ignored = dockerignore(
    [
      '# comment',
      '.git',
      '**/node_modules',
      'web/dist',
      '*.sqlite',
      '.env',
      '.env.*',
      '!.env.example',
      'docs/',
    ].join('\n'),
  );

  it('excludes a matched path and everything under it, at any depth with **', () => {
    expect(ignored('.git/config')).toBe(true);
    expect(ignored('node_modules/x/index.js')).toBe(true);
    expect(ignored('web/node_modules/x')).toBe(true);
    expect(ignored('web/dist/index.html')).toBe(true);
    expect(ignored('docs/setup.md')).toBe(true);
  });

  it('anchors patterns at the context root and lets the last matching rule decide', () => {
    expect(ignored('verdict.sqlite')).toBe(true);
    expect(ignored('data/verdict.sqlite')).toBe(false);
    expect(ignored('.env')).toBe(true);
    expect(ignored('.env.local')).toBe(true);
    expect(ignored('.env.example')).toBe(false);
    expect(ignored('web/src/main.tsx')).toBe(false);
    expect(ignored('src/main.ts')).toBe(false);
  });
});

describe("the project's Dockerfile, .dockerignore and compose.yaml (issue 33, item 7)", () => {
  const stages = parseDockerfile(readFileSync('Dockerfile', 'utf8'));
  const image = stages[stages.length - 1]!;
  const ins = (stage: Stage, keyword: string) => stage.instructions.filter((i) => i.keyword === keyword);
  const fromStage = (name: string) => stages.find((s) => s.name === name)!;

  it('runs on Node 20 slim as a non-root user with a numeric id', () => {
    expect(stages.every((s) => s.base === 'node:20-slim')).toBe(true);
    const user = ins(image, 'USER').at(-1)!.args;
    expect(user).toMatch(/^\d+:\d+$/);
    expect(Number(user.split(':')[0])).toBeGreaterThan(0);
  });

  it('ships production dependencies only, installed with npm ci --omit=dev', () => {
    const modules = ins(image, 'COPY').find((c) => /node_modules/.test(c.args))!;
    expect(modules.flags.from).toBeDefined();
    const deps = fromStage(modules.flags.from!);
    expect(ins(deps, 'RUN').some((r) => /\bnpm ci\b[^&]*--omit=dev/.test(r.args))).toBe(true);
    // No stage that installs dev dependencies is copied into the image except for the dashboard's build.
    const copiedFrom = ins(image, 'COPY').filter((c) => c.flags.from);
    expect(copiedFrom.map((c) => c.args)).toEqual([
      '/app/node_modules ./node_modules',
      '/app/web/dist ./web/dist',
    ]);
  });

  it('builds the dashboard in a builder stage and copies only web/dist from it', () => {
    const dist = ins(image, 'COPY').find((c) => /web\/dist/.test(c.args))!;
    expect(ins(fromStage(dist.flags.from!), 'RUN').some((r) => /npm run build:web/.test(r.args))).toBe(true);
  });

  it('checks /health, declares the data volume and starts the server with node itself', () => {
    const health = ins(image, 'HEALTHCHECK')[0]!;
    expect(health.exec?.join(' ')).toMatch(/\/health'/);
    expect(ins(image, 'VOLUME')[0]!.args).toBe('/app/data');
    expect(ins(image, 'WORKDIR').at(-1)!.args).toBe('/app');
    expect(ins(image, 'CMD')[0]!.exec).toEqual(['node', '--import', 'tsx', 'src/main.ts']);
  });

  it('keeps secrets and local state out of the build context', () => {
    const ignored = dockerignore(readFileSync('.dockerignore', 'utf8'));
    for (const p of [
      '.env',
      '.env.production',
      'node_modules/x',
      'data/verdict.sqlite',
      'web/dist/index.html',
      'key.pem',
    ]) {
      expect([p, ignored(p)]).toEqual([p, true]);
    }
    for (const p of ['src/main.ts', 'web/src/main.tsx', 'bin/verdict.mjs', 'package-lock.json', 'app.yml']) {
      expect([p, ignored(p)]).toEqual([p, false]);
    }
  });

  type Service = {
    image?: string;
    build?: string;
    command?: string[];
    env_file?: string;
    environment?: Record<string, string>;
    volumes?: string[];
    depends_on?: Record<string, { condition: string }>;
    healthcheck?: { test?: string[]; disable?: boolean };
  };
  const compose = parseDocument(readFileSync('compose.yaml', 'utf8'), { merge: true }).toJS() as {
    services: Record<string, Service>;
    volumes: Record<string, unknown>;
  };

  it('runs PostgreSQL with a health check and a volume, the server, and a separate worker', () => {
    const { postgres, verdict, worker } = compose.services;
    expect(postgres!.healthcheck!.test!.join(' ')).toMatch(/pg_isready/);
    expect(postgres!.volumes).toEqual(['postgres-data:/var/lib/postgresql/data']);
    expect(verdict!.environment!.VERDICT_WORKER_INLINE).toBe('0');
    expect(verdict!.environment!.DATABASE_URL).toMatch(
      /^postgres:\/\/verdict:\$\{POSTGRES_PASSWORD[^}]*\}@postgres:5432\/verdict$/,
    );
    expect(verdict!.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    expect(worker!.command).toEqual(['node', '--import', 'tsx', 'src/worker/main.ts']);
    expect(worker!.environment!.DATABASE_URL).toBe(verdict!.environment!.DATABASE_URL);
    expect(worker!.depends_on).toEqual({ verdict: { condition: 'service_healthy' } });
    expect(worker!.healthcheck).toEqual({ disable: true });
    for (const s of [verdict!, worker!]) {
      expect(s.image).toBe('verdict:local');
      expect(s.env_file).toBe('.env');
      expect(s.volumes).toEqual(['verdict-data:/app/data']);
    }
    expect(Object.keys(compose.volumes).sort()).toEqual(['postgres-data', 'verdict-data']);
  });

  it('writes no secret: passwords, keys, tokens and secrets are only ${...} references to .env', () => {
    const reference = /^\$\{[A-Z_]+(:[?-][^}]*)?\}$/;
    let checked = 0;
    for (const [name, service] of Object.entries(compose.services)) {
      for (const [key, value] of Object.entries(service.environment ?? {})) {
        if (/PASSWORD|SECRET|TOKEN|KEY/.test(key)) {
          expect([name, key, String(value)]).toEqual([name, key, expect.stringMatching(reference)]);
          checked++;
        }
        const password = /:\/\/[^:@/]+:([^@]+)@/.exec(String(value))?.[1];
        if (password !== undefined) {
          expect([name, key, password]).toEqual([name, key, expect.stringMatching(reference)]);
          checked++;
        }
      }
    }
    expect(checked).toBe(3); // postgres's POSTGRES_PASSWORD, and DATABASE_URL of the server and the worker
  });
});
