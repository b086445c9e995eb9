/**
 * The validation sandbox of the native runtime (review-engine 4.2, docs/native.md "Validation"): an HTTP
 * service on port 8080 that runs one validation job at a time. `POST /run` takes a sandbox job (the
 * protocol's `sandboxJobSchema`: executor, plan, time limit, the checkout as a gzip'd tar), unpacks the
 * checkout into a scratch folder, runs the plan with this process's executor of that name (bubblewrap
 * here; `local` only as the configuration allows it) and answers with the outcome. A second job while one
 * runs answers 503 `sandbox_busy`; `GET /health` answers `{ ok, busy }`.
 */
import fs from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Logger } from 'pino';
import { BodyTooLargeError, readBody, sendJson as send } from '../../http/router.js';
import * as tar from 'tar';
import type { ExecutorFactory } from '../../validation/executors.js';
import type { ValidationOutcome } from '../../validation/types.js';
import { SANDBOX_ARCHIVE_MAX_BYTES, sandboxJobSchema, type SandboxJob } from '../protocol.js';

/** The largest request body: the base64 archive and the plan. */
const MAX_BODY = Math.ceil(SANDBOX_ARCHIVE_MAX_BYTES / 3) * 4 + 1024 * 1024;

export type SandboxServiceOptions = {
  executors: ExecutorFactory;
  log: Logger;
  /** Where scratch folders are made (default: the system's temporary folder). */
  scratchRoot?: string;
};

const fail = (res: ServerResponse, status: number, code: string, message: string) =>
  send(res, status, { error: { code, message } });

/** Unpacks the checkout: regular files, folders and symbolic links only, no ownership from the archive. */
async function unpack(archive: Buffer, dir: string): Promise<void> {
  await pipeline(
    Readable.from([archive]),
    tar.x({
      cwd: dir,
      preserveOwner: false,
      filter: (_path, entry) => {
        const type = 'type' in entry ? entry.type : 'File';
        return type === 'File' || type === 'Directory' || type === 'SymbolicLink';
      },
    }),
  );
}

export class SandboxService {
  private server: Server | null = null;
  private busy = false;

  constructor(private readonly opts: SandboxServiceOptions) {}

  async listen(port: number, host?: string): Promise<number> {
    const server = createServer((req, res) => void this.handle(req, res));
    this.server = server;
    await new Promise<void>((resolve) => server.listen(port, host, resolve));
    return (server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? '/';
    if (req.method === 'GET' && url === '/health') return send(res, 200, { ok: true, busy: this.busy });
    if (req.method !== 'POST' || url !== '/run') return fail(res, 404, 'not_found', `${url} is not served`);
    if (this.busy) {
      req.resume();
      return fail(res, 503, 'sandbox_busy', 'a validation job is running');
    }
    this.busy = true;
    try {
      let json: unknown;
      try {
        json = JSON.parse((await readBody(req, MAX_BODY)).toString('utf8'));
      } catch (error) {
        if (error instanceof BodyTooLargeError)
          return fail(res, 413, 'payload_too_large', 'the job is larger than the sandbox takes');
        if (!(error instanceof SyntaxError)) throw error;
        return fail(res, 400, 'invalid_json', 'the body is not JSON');
      }
      const job = sandboxJobSchema.safeParse(json);
      if (!job.success) return fail(res, 400, 'invalid_request', job.error.message);
      send(res, 200, await this.run(job.data));
    } catch (error) {
      this.opts.log.error({ event: 'sandbox-run-failed', err: error }, 'the validation job failed');
      if (!res.headersSent) fail(res, 500, 'sandbox_error', (error as Error).message);
    } finally {
      this.busy = false;
    }
  }

  /** Runs one job in a scratch folder of its own, removed afterwards. */
  private async run(job: SandboxJob): Promise<ValidationOutcome> {
    const scratch = await fs.promises.mkdtemp(
      path.join(this.opts.scratchRoot ?? os.tmpdir(), 'verdict-sandbox-'),
    );
    try {
      const dir = path.join(scratch, 'checkout');
      await fs.promises.mkdir(dir);
      await unpack(Buffer.from(job.archive, 'base64'), dir);
      const executor = this.opts.executors(job.executor, { trusted: job.trusted });
      this.opts.log.info(
        { event: 'sandbox-run', executor: job.executor, commands: job.plan.commands.length },
        `running ${job.plan.commands.length} command(s) with ${job.executor}`,
      );
      return await executor.run(job.plan, dir, { timeoutMs: job.timeoutMs });
    } finally {
      await fs.promises.rm(scratch, { recursive: true, force: true }).catch(() => undefined);
    }
  }
}
