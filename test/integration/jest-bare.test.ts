import { execFile } from 'node:child_process';
import { jest } from '@jest/globals';

jest.setTimeout(180_000);

/** `npx jest …` without NODE_OPTIONS, as the README's PostgreSQL line and a developer would run it. */
function bareJest(args: string[]): Promise<{ code: number; output: string }> {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  return new Promise((resolve) => {
    execFile('npx', ['jest', '--ci', ...args], { env, timeout: 170_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, output: `${stdout}${stderr}` }),
    );
  });
}

describe('bare `npx jest` works as `npm test` does', () => {
  test('an ESM-only suite passes without --experimental-vm-modules in NODE_OPTIONS', async () => {
    const { code, output } = await bareJest(['test/unit/esm-only.test.ts']);
    expect(output).toMatch(/Tests:\s+1 passed, 1 total/);
    expect(code).toBe(0);
  });

  test("Jest's exit code comes through the second start", async () => {
    const { code, output } = await bareJest(['test/unit/no-such-suite.test.ts']);
    expect(output).toMatch(/No tests found/);
    expect(code).toBe(1);
  });
});
