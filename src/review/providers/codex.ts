import { spawn as nodeSpawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  EMPTY_ANSWER_MESSAGE,
  ModelCallError,
  withDeadline,
  type ModelMessage,
  type ModelProvider,
  type ModelRequest,
  type ModelResponse,
} from './types.js';

/**
 * `codex`: the local Codex CLI, not an HTTP provider (review-engine 4.6 "cli"). Each call runs
 * `<bin> exec --skip-git-repo-check -m <model> -` in a fresh empty temporary directory with the prompt
 * (system prompt, JSON schema and the conversation, flattened) on stdin; the answer is its stdout (the
 * engine extracts the JSON). `CODEX_HOME` is `VERDICT_RUNNER_HOME` when set (where the CLI keeps its login).
 * The CLI reports no token usage here, so usage and cost are null.
 */

export const DEFAULT_CODEX_MODEL = 'gpt-5-codex';
/** Stdout kept at most (the answer); stderr keeps only its tail for the error message. */
const MAX_STDOUT_BYTES = 16 * 1024 * 1024;
const STDERR_TAIL_BYTES = 64 * 1024;
/** After SIGTERM on a timeout, SIGKILL follows this much later if the process group is still there. */
const KILL_GRACE_MS = 2000;

export type SpawnFn = typeof nodeSpawn;

export type CodexOptions = {
  model: string;
  /** The binary (`VERDICT_RUNNER_BIN`). */
  bin: string;
  /** `VERDICT_RUNNER_HOME`: the child's `CODEX_HOME`. */
  home?: string | null;
  /** The repository configuration's `model.reasoningEffort`: `-c model_reasoning_effort=<effort>`. */
  reasoningEffort?: string;
  /** Extra environment of the child (over process.env). */
  env?: Record<string, string | undefined>;
  spawn?: SpawnFn;
  now?: () => number;
};

/** The whole request as one prompt for the CLI. */
function flattenPrompt(system: string, messages: ModelMessage[]): string {
  const parts = [system];
  for (const m of messages) parts.push(`### ${m.role === 'user' ? 'User' : 'Assistant'}\n\n${m.content}`);
  return `${parts.join('\n\n')}\n`;
}

/** The last non-blank line of a text (the CLI's stderr), or null. */
function lastLine(text: string): string | null {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
  return lines.at(-1)?.trim() ?? null;
}

export class CodexProvider implements ModelProvider {
  readonly name = 'codex' as const;
  readonly model: string;
  readonly bin: string;

  constructor(private readonly opts: CodexOptions) {
    this.model = opts.model;
    this.bin = opts.bin;
  }

  /** The argv after the binary; with a schema file, the CLI's own structured output (`--output-schema`). */
  args(schemaFile?: string): string[] {
    return [
      'exec',
      '--skip-git-repo-check',
      '-m',
      this.model,
      ...(this.opts.reasoningEffort ? ['-c', `model_reasoning_effort=${this.opts.reasoningEffort}`] : []),
      ...(schemaFile ? ['--output-schema', schemaFile] : []),
      '-',
    ];
  }

  async complete(req: ModelRequest): Promise<ModelResponse> {
    const now = this.opts.now ?? Date.now;
    const startedAt = now();
    // The schema goes to the CLI as a file (`--output-schema`), not into the prompt.
    const prompt = flattenPrompt(req.system, req.messages);
    const text = await withDeadline(req, this.name, (signal) => this.run(prompt, signal, req.jsonSchema));
    if (text.trim() === '') {
      throw new ModelCallError('empty', EMPTY_ANSWER_MESSAGE, { retryable: false, provider: this.name });
    }
    return {
      text,
      usage: { inputTokens: null, outputTokens: null },
      costUsd: null,
      provider: this.name,
      model: this.model,
      durationMs: now() - startedAt,
      ...(req.jsonSchema ? { structuredOutput: 'output_schema' } : {}),
    };
  }

  private run(prompt: string, signal: AbortSignal, schema?: Record<string, unknown>): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const cwd = mkdtempSync(join(tmpdir(), 'verdict-codex-'));
      const schemaFile = schema ? join(cwd, 'review-output.schema.json') : undefined;
      if (schemaFile) writeFileSync(schemaFile, JSON.stringify(schema));
      const env: NodeJS.ProcessEnv = { ...process.env, ...this.opts.env };
      if (this.opts.home) env.CODEX_HOME = this.opts.home;
      const spawn = this.opts.spawn ?? nodeSpawn;
      // Its own process group, so a timeout can stop the CLI and everything it started.
      const detached = process.platform !== 'win32';
      let child: ChildProcess;
      try {
        child = spawn(this.bin, this.args(schemaFile), {
          cwd,
          env,
          stdio: ['pipe', 'pipe', 'pipe'],
          detached,
        });
      } catch (error) {
        rmSync(cwd, { recursive: true, force: true });
        reject(this.spawnError(error));
        return;
      }
      const stdout: Buffer[] = [];
      let stdoutBytes = 0;
      let stderr = '';
      let killTimer: NodeJS.Timeout | null = null;
      const kill = (sig: NodeJS.Signals) => {
        try {
          if (detached && child.pid !== undefined) process.kill(-child.pid, sig);
          else child.kill(sig);
        } catch {
          // already gone
        }
      };
      const onAbort = () => {
        kill('SIGTERM');
        killTimer = setTimeout(() => kill('SIGKILL'), KILL_GRACE_MS);
        killTimer.unref();
      };
      signal.addEventListener('abort', onAbort, { once: true });

      child.stdout?.on('data', (chunk: Buffer) => {
        if (stdoutBytes >= MAX_STDOUT_BYTES) return;
        stdout.push(chunk);
        stdoutBytes += chunk.length;
      });
      child.stderr?.on('data', (chunk: Buffer) => {
        stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_TAIL_BYTES);
      });
      // The CLI may exit before reading all of stdin (EPIPE): its exit status tells what happened.
      child.stdin?.on('error', () => undefined);

      let done = false;
      const finish = (error: ModelCallError | null, text?: string) => {
        if (done) return;
        done = true;
        signal.removeEventListener('abort', onAbort);
        rmSync(cwd, { recursive: true, force: true });
        if (error) reject(error);
        else resolve(text ?? '');
      };
      child.on('error', (error) => finish(this.spawnError(error)));
      child.on('close', (code, sig) => {
        if (killTimer) clearTimeout(killTimer);
        if (code === 0) {
          finish(null, Buffer.concat(stdout).toString('utf8'));
          return;
        }
        finish(this.exitError(code, sig, stderr));
      });
      child.stdin?.end(prompt);
    });
  }

  /** The CLI ended without an answer: how, with the last line it wrote to stderr. */
  private exitError(code: number | null, sig: NodeJS.Signals | null, stderr: string): ModelCallError {
    const tail = lastLine(stderr);
    const how = code !== null ? `exited with code ${code}` : `was killed by signal ${sig}`;
    return new ModelCallError('unavailable', `codex ${how}${tail ? `: ${tail}` : ''}`, {
      retryable: true,
      provider: this.name,
    });
  }

  private spawnError(error: unknown): ModelCallError {
    const message =
      (error as NodeJS.ErrnoException | null)?.code === 'ENOENT'
        ? `codex binary not found: ${this.bin} (set VERDICT_RUNNER_BIN or choose another VERDICT_RUNNER_PROVIDER)`
        : `codex binary could not be started: ${this.bin} (${(error as Error)?.message ?? String(error)})`;
    return new ModelCallError('unavailable', message, { provider: this.name, cause: error });
  }
}
