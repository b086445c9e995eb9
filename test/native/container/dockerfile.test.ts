import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The container image cannot be built here (no registry): its Dockerfile's shape is checked instead.
 * Node 20 slim, production dependencies only, port 8080, the container's entry point, and every file it
 * copies from the build context (the repository root) present.
 */
const root = process.cwd();
const text = readFileSync(join(root, 'src/native/container/Dockerfile'), 'utf8');
const lines = text
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l !== '' && !l.startsWith('#'));
const instructions = (name: string) => lines.filter((l) => l.startsWith(`${name} `));

describe('the review container Dockerfile', () => {
  it('builds on node:20-slim with production dependencies only', () => {
    const bases = instructions('FROM').map((l) => l.split(/\s+/)[1]);
    expect(bases.length).toBeGreaterThan(0);
    expect(new Set(bases)).toEqual(new Set(['node:20-slim']));
    expect(text).toMatch(/npm ci --omit=dev/);
  });

  it('exposes 8080 and runs the container entry point, which exists', () => {
    expect(instructions('EXPOSE')).toEqual(['EXPOSE 8080']);
    const cmd = JSON.parse(instructions('CMD')[0]!.slice('CMD '.length)) as string[];
    expect(cmd.slice(0, 3)).toEqual(['node', '--import', 'tsx']);
    expect(cmd[3]).toBe('src/native/container/main.ts');
    expect(existsSync(join(root, cmd[3]!))).toBe(true);
  });

  it('copies only files that exist in the build context, and bakes in no secret', () => {
    for (const copy of instructions('COPY').filter((l) => !l.includes('--from='))) {
      const sources = copy.split(/\s+/).slice(1, -1);
      for (const source of sources) expect([source, existsSync(join(root, source))]).toEqual([source, true]);
    }
    expect(text).not.toMatch(/PRIVATE_KEY|API_KEY|ENV .*TOKEN/);
  });
});
