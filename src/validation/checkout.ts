/**
 * A scratch checkout of one commit for validation: GitHub's tarball of the commit ("download a repository
 * archive (tar)", which answers with a redirect to codeload), streamed through the installation's Octokit
 * into `tar`, the archive's top folder stripped. Only regular files, folders and symbolic links are
 * extracted (node-tar already refuses absolute paths and `..`); ownership is never taken from the archive.
 * An archive larger than the cap stops the download with an error saying so.
 */
import fs from 'node:fs';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import * as tar from 'tar';
import type { GitHubClient } from '../github/client.js';

/** The largest archive a checkout downloads (compressed bytes). */
export const DEFAULT_CHECKOUT_MAX_BYTES = 512 * 1024 * 1024;

export class CheckoutError extends Error {}

export async function downloadCheckout(
  gh: GitHubClient,
  where: { owner: string; repo: string; ref: string },
  dir: string,
  opts: { maxBytes?: number; signal?: AbortSignal } = {},
): Promise<{ bytes: number }> {
  const max = opts.maxBytes ?? DEFAULT_CHECKOUT_MAX_BYTES;
  let body: unknown;
  try {
    const response = await gh.request('GET /repos/{owner}/{repo}/tarball/{ref}', {
      ...where,
      request: { parseSuccessResponseBody: false, ...(opts.signal ? { signal: opts.signal } : {}) },
    });
    body = response.data;
  } catch (error) {
    const status = (error as { status?: number }).status;
    throw new CheckoutError(
      `could not download ${where.owner}/${where.repo}@${where.ref.slice(0, 12)}${status ? ` (HTTP ${status})` : ''}: ${(error as Error).message}`,
    );
  }
  const source = toNodeStream(body);
  let bytes = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      if (bytes > max)
        done(new CheckoutError(`the archive is larger than ${Math.round(max / 1024 / 1024)} MiB`));
      else done(null, chunk);
    },
  });
  await fs.promises.mkdir(dir, { recursive: true });
  try {
    await pipeline(
      source,
      counter,
      tar.x({
        cwd: dir,
        strip: 1,
        preserveOwner: false,
        filter: (_path, entry) => {
          const type = 'type' in entry ? entry.type : 'File';
          return type === 'File' || type === 'Directory' || type === 'SymbolicLink';
        },
      }),
      ...(opts.signal ? [{ signal: opts.signal }] : []),
    );
  } catch (error) {
    if (error instanceof CheckoutError) throw error;
    throw new CheckoutError(
      `could not unpack the archive of ${where.ref.slice(0, 12)}: ${(error as Error).message}`,
    );
  }
  return { bytes };
}

/** Octokit's unparsed body: a web ReadableStream (fetch), or already bytes. */
function toNodeStream(body: unknown): Readable {
  if (body instanceof ArrayBuffer) return Readable.from([Buffer.from(body)]);
  if (Buffer.isBuffer(body)) return Readable.from([body]);
  if (body && typeof (body as ReadableStream).getReader === 'function') {
    return Readable.fromWeb(body as import('node:stream/web').ReadableStream);
  }
  if (typeof body === 'string') return Readable.from([Buffer.from(body, 'binary')]);
  throw new CheckoutError('the archive download returned no body');
}
