/** Bundles the native edge worker for workerd (dist/native/worker.mjs); `nodejs_compat` serves node:*. */
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

export const WORKER_BUNDLE = fileURLToPath(new URL('../dist/native/worker.mjs', import.meta.url));

export async function buildWorker(outfile = WORKER_BUNDLE): Promise<string> {
  await build({
    entryPoints: [fileURLToPath(new URL('../src/native/worker/index.ts', import.meta.url))],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    conditions: ['workerd', 'worker', 'import'],
    mainFields: ['module', 'main'],
    external: ['node:*', 'cloudflare:*'],
    outfile,
    logLevel: 'warning',
  });
  return outfile;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(await buildWorker());
}
