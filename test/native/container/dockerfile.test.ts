import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDockerfile } from '../../../scripts/container/dockerfile.js';

/**
 * The container image cannot be built here (no registry): its Dockerfile's shape is checked instead, read
 * with the project's own Dockerfile reader (scripts/container/dockerfile.ts). Node 20 slim, production
 * dependencies only, port 8080, the container's entry point, and every file it copies from the build
 * context (the repository root) present.
 */
const root = process.cwd();
const text = readFileSync(join(root, 'src/native/container/Dockerfile'), 'utf8');
const stages = parseDockerfile(text);
const runtime = stages.at(-1)!;
const of = (keyword: string) => runtime.instructions.filter((i) => i.keyword === keyword);

describe('the review container Dockerfile', () => {
  it('builds on node:20-slim with production dependencies only', () => {
    expect(stages.map((s) => s.base)).toEqual(['node:20-slim', 'node:20-slim']);
    const installs = stages.flatMap((s) => s.instructions.filter((i) => i.keyword === 'RUN'));
    expect(installs.map((i) => i.args).join('\n')).toMatch(/npm ci --omit=dev/);
  });

  it('exposes 8080 and runs the container entry point, which exists', () => {
    expect(of('EXPOSE').map((i) => i.args)).toEqual(['8080']);
    const cmd = of('CMD')[0]!.exec!;
    expect(cmd).toEqual(['node', '--import', 'tsx', 'src/native/container/main.ts']);
    expect(existsSync(join(root, cmd[3]!))).toBe(true);
  });

  it('copies only files that exist in the build context, and bakes in no secret', () => {
    const copies = stages.flatMap((s) => s.instructions.filter((i) => i.keyword === 'COPY' && !i.flags.from));
    expect(copies.length).toBeGreaterThan(0);
    for (const copy of copies) {
      const sources = copy.args.split(/\s+/).slice(0, -1);
      for (const source of sources) expect([source, existsSync(join(root, source))]).toEqual([source, true]);
    }
    expect(text).not.toMatch(/PRIVATE_KEY|API_KEY|ENV .*TOKEN/);
  });
});

describe('the validation sandbox Dockerfile', () => {
  const sandboxText = readFileSync(join(root, 'src/native/sandbox/Dockerfile'), 'utf8');
  const sandboxStages = parseDockerfile(sandboxText);
  const last = sandboxStages.at(-1)!;

  it('builds on node:20-slim with bubblewrap, runs the sandbox entry point on 8080, bakes in no secret', () => {
    expect(sandboxStages.map((s) => s.base)).toEqual(['node:20-slim', 'node:20-slim']);
    const runs = last.instructions.filter((i) => i.keyword === 'RUN').map((i) => i.args);
    expect(runs.join('\n')).toMatch(/apt-get install -y --no-install-recommends bubblewrap/);
    expect(last.instructions.filter((i) => i.keyword === 'EXPOSE').map((i) => i.args)).toEqual(['8080']);
    const cmd = last.instructions.find((i) => i.keyword === 'CMD')!.exec!;
    expect(cmd).toEqual(['node', '--import', 'tsx', 'src/native/sandbox/main.ts']);
    expect(existsSync(join(root, cmd[3]!))).toBe(true);
    expect(sandboxText).not.toMatch(/PRIVATE_KEY|API_KEY|ENV .*TOKEN/);
  });
});
