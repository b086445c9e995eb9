import type { ClaimedJob, EnqueueInput, EnqueueResult, FailResult, Job, JobStatus } from './types.js';
import type { QueueBackend } from './types.js';

export class QueueHttpError extends Error {
  constructor(
    readonly status: number | null,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'QueueHttpError';
  }
}

/**
 * The queue of a Verdict server over its `/queue` routes (VERDICT_QUEUE_URL + VERDICT_QUEUE_TOKEN), so a
 * worker needs no database credentials. A refused receipt (409 `stale_receipt`) is the interface's
 * refusal (null / false); any other failure throws a QueueHttpError naming the status and code.
 * Reaping expired leases is the server's job: `reapExpired` here does nothing and returns 0.
 */
export class HttpQueue implements QueueBackend {
  readonly kind = 'http' as const;
  private readonly url: string;
  private readonly fetchImpl: typeof fetch;
  private readonly timeoutMs: number;

  constructor(
    private readonly opts: { url: string; token: string; fetch?: typeof fetch; timeoutMs?: number },
  ) {
    let parsed: URL;
    try {
      parsed = new URL(opts.url);
    } catch {
      throw new Error(`VERDICT_QUEUE_URL is not a URL: ${opts.url}`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw new Error(`VERDICT_QUEUE_URL must be http or https: ${opts.url}`);
    }
    if (!opts.token) throw new Error('VERDICT_QUEUE_TOKEN is empty');
    this.url = opts.url.replace(/\/+$/, '');
    this.fetchImpl = opts.fetch ?? fetch;
    this.timeoutMs = opts.timeoutMs ?? 15_000;
  }

  /**
   * One request. 2xx answers the JSON body (which must say `ok: true`); 409 `stale_receipt` answers null
   * when the caller treats it as a refusal; anything else throws a QueueHttpError.
   */
  private async call<T>(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    opts: { staleOk?: boolean } = {},
  ): Promise<T | null> {
    const what = `queue ${method} ${path}`;
    let res: Response;
    let text: string;
    try {
      res = await this.fetchImpl(this.url + path, {
        method,
        headers: {
          authorization: `Bearer ${this.opts.token}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      text = await res.text();
    } catch (error) {
      const err = error as Error & { cause?: { code?: string; message?: string } };
      if (err?.name === 'TimeoutError' || err?.name === 'AbortError') {
        throw new QueueHttpError(null, 'queue_timeout', `${what} timed out after ${this.timeoutMs} ms`);
      }
      const cause = err?.cause?.code ?? err?.cause?.message;
      throw new QueueHttpError(
        null,
        'queue_unreachable',
        `${what} failed: ${err?.message ?? String(error)}${cause ? ` (${cause})` : ''}`,
      );
    }
    let json: Record<string, unknown> | null = null;
    try {
      const parsed: unknown = text ? JSON.parse(text) : null;
      json = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : null;
    } catch {
      json = null;
    }
    if (res.status === 409 && json?.error === 'stale_receipt' && opts.staleOk) return null;
    if (!res.ok) {
      const code = typeof json?.error === 'string' ? json.error : 'http_error';
      const detail = typeof json?.message === 'string' ? `: ${json.message}` : '';
      throw new QueueHttpError(res.status, code, `${what} answered ${res.status} ${code}${detail}`);
    }
    if (json?.ok !== true) {
      throw new QueueHttpError(
        res.status,
        'invalid_response',
        `${what} answered ${res.status} without a JSON body saying ok: true`,
      );
    }
    return json as T;
  }

  async enqueue(input: EnqueueInput): Promise<EnqueueResult> {
    const r = await this.call<EnqueueResult & { ok: true }>('POST', '/queue/enqueue', input);
    const { ok: _ok, ...result } = r!;
    return result as EnqueueResult;
  }

  async claim(queue: string, owner: string, leaseMs: number): Promise<ClaimedJob | null> {
    const r = await this.call<{ job: ClaimedJob | null }>('POST', '/queue/claim', { queue, owner, leaseMs });
    return r!.job;
  }

  async renew(jobId: number, receipt: string, leaseMs: number): Promise<number | null> {
    const r = await this.call<{ leaseExpiresAt: number }>(
      'POST',
      '/queue/renew',
      { jobId, receipt, leaseMs },
      { staleOk: true },
    );
    return r ? r.leaseExpiresAt : null;
  }

  async ack(jobId: number, receipt: string): Promise<boolean> {
    return (await this.call('POST', '/queue/ack', { jobId, receipt }, { staleOk: true })) !== null;
  }

  async fail(
    jobId: number,
    receipt: string,
    error: string,
    opts: { deadReason?: string } = {},
  ): Promise<FailResult | null> {
    const r = await this.call<{ result: FailResult }>(
      'POST',
      '/queue/fail',
      {
        jobId,
        receipt,
        error: error.slice(0, 4000),
        ...(opts.deadReason ? { deadReason: opts.deadReason } : {}),
      },
      { staleOk: true },
    );
    return r ? r.result : null;
  }

  async release(jobId: number, receipt: string, opts: { delayMs?: number } = {}): Promise<boolean> {
    const body = { jobId, receipt, ...(opts.delayMs !== undefined ? { delayMs: opts.delayMs } : {}) };
    return (await this.call('POST', '/queue/release', body, { staleOk: true })) !== null;
  }

  async reapExpired(): Promise<number> {
    return 0;
  }

  async list(filter: { queue?: string; status?: JobStatus; limit?: number } = {}): Promise<Job[]> {
    const params = new URLSearchParams();
    if (filter.queue) params.set('queue', filter.queue);
    if (filter.status) params.set('status', filter.status);
    if (filter.limit !== undefined) params.set('limit', String(filter.limit));
    const q = params.toString();
    return (await this.call<{ jobs: Job[] }>('GET', `/queue/jobs${q ? `?${q}` : ''}`))!.jobs;
  }

  async stats(): Promise<Array<{ queue: string; status: JobStatus; count: number }>> {
    return (await this.call<{ stats: Array<{ queue: string; status: JobStatus; count: number }> }>(
      'GET',
      '/queue/stats',
    ))!.stats;
  }
}
