import { existsSync } from 'node:fs';
import { runCli } from './main.js';

/**
 * The `verdict` command's entry: it always runs, whichever path started it (bin/verdict.mjs, the
 * node_modules/.bin/verdict link npx runs, `npm run cli`). Like `npm start`, it first reads `.env` in the
 * working directory, when there is one, for the variables the environment does not set (a variable set in
 * the environment, even empty, wins over the file).
 */
if (existsSync('.env')) {
  try {
    process.loadEnvFile('.env');
  } catch (error) {
    process.stderr.write(`verdict: cannot read .env: ${(error as Error).message}\n`);
    process.exit(1);
  }
}

const code = await runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(`${text}\n`),
  stderr: (text) => process.stderr.write(`${text}\n`),
  env: process.env,
  isTty: Boolean(process.stdout.isTTY),
});
if (code !== null) process.exitCode = code;
