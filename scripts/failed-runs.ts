/**
 * Lists the pull requests whose latest review run failed, through the typed tRPC facade.
 *
 *   VERDICT_OPERATOR_READ_TOKEN=... npx tsx scripts/failed-runs.ts [--json]
 *
 * It calls the server at `VERDICT_URL`, by default this machine on the server's own port (`PORT`, 8787 unless set).
 * A read-scoped API key (`vdt_…`) works as the token too. Exits 1 with one line on stderr when the call
 * is refused or the server cannot be reached.
 */
import { VARIABLES } from '../src/config/env.js';
import { createVerdictClient, operatorCodeOf } from '../src/trpc/client.js';

/** Where the server listens when `VERDICT_URL` is not set: this machine, on the server's own port. */
function defaultServerUrl(env: NodeJS.ProcessEnv = process.env): string {
  return `http://127.0.0.1:${env.PORT ?? VARIABLES.PORT.default}`;
}

async function main(): Promise<void> {
  const baseUrl = process.env.VERDICT_URL ?? defaultServerUrl();
  const token = process.env.VERDICT_OPERATOR_READ_TOKEN ?? process.env.REVIEWBOT_OPERATOR_READ_TOKEN;
  if (!token)
    throw new Error('set VERDICT_OPERATOR_READ_TOKEN (or a read-scoped API key) to call the operator API');
  const client = createVerdictClient({ baseUrl, token });
  const snapshot = await client.snapshot.query({ view: 'pull-requests', status: 'failed' });
  const data = snapshot.data as {
    items: Array<{
      repo: string;
      number: number;
      title: string | null;
      latestRun: { reviewKey: string; reason: string | null; updatedAt: number | null } | null;
    }>;
    truncated: boolean;
  };
  if (process.argv.includes('--json')) {
    process.stdout.write(`${JSON.stringify(data.items)}\n`);
    return;
  }
  if (data.items.length === 0) {
    process.stdout.write('No failed runs.\n');
    return;
  }
  for (const item of data.items) {
    const when = item.latestRun?.updatedAt ? new Date(item.latestRun.updatedAt).toISOString() : '-';
    process.stdout.write(
      `${`${item.repo}#${item.number}`.padEnd(40)} ${when}  ${item.latestRun?.reason ?? '-'}  ${item.title ?? ''}\n`,
    );
  }
  if (data.truncated) process.stdout.write('(more than 100: narrow with a repository)\n');
}

main().catch((error: unknown) => {
  const code = operatorCodeOf(error);
  process.stderr.write(
    `failed-runs: ${code ? `${code}: ` : ''}${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
