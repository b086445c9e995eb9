/**
 * Artifact storage for evidence (review-engine 2.6; issue 26 item 5; docs/evidence.md): where the output of
 * a validation command is kept so a finding can link to it. Two stores: a local directory (the default)
 * and an S3-compatible bucket through the AWS SDK v3 (`@aws-sdk/client-s3`, public API only).
 *
 * A key is a relative, `/`-separated path (`runs/<runId>/<artifact id>.log`); both stores refuse a key
 * that could leave its root (absolute, `..`, `.`, empty segments, backslashes, control characters).
 */
import { randomUUID } from 'node:crypto';
import { mkdir, realpath, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, resolve, sep } from 'node:path';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { EvidenceConfig } from '../config/index.js';

export interface ArtifactStorage {
  kind: 'local' | 's3';
  /**
   * Stores `body` under `key` (replacing what was there) and answers the key it is stored under (with an
   * S3 prefix, the full object key) and a URL to read it at, or null when the store has none.
   */
  put(input: {
    key: string;
    body: Buffer | string;
    contentType: string;
  }): Promise<{ key: string; url: string | null }>;
}

/** SigV4 presigned URLs live at most 7 days; that is the default. */
export const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;
const MAX_KEY_LENGTH = 1024;

/** The key as given, or an Error saying why it is refused. */
export function checkArtifactKey(key: string): string {
  if (typeof key !== 'string' || key.length === 0) throw new Error('artifact key is empty');
  if (key.length > MAX_KEY_LENGTH)
    throw new Error(`artifact key is longer than ${MAX_KEY_LENGTH} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f\\]/.test(key)) {
    throw new Error(`artifact key ${JSON.stringify(key)} has a control character or a backslash`);
  }
  if (key.startsWith('/')) throw new Error(`artifact key ${JSON.stringify(key)} is absolute`);
  for (const segment of key.split('/')) {
    if (segment === '' || segment === '.' || segment === '..') {
      throw new Error(`artifact key ${JSON.stringify(key)} has an empty, "." or ".." segment`);
    }
  }
  return key;
}

/** `<base>/<key>` with each key segment percent-encoded (the base has no trailing slash after this). */
export function publicUrl(baseUrl: string, key: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/${key.split('/').map(encodeURIComponent).join('/')}`;
}

export interface LocalArtifactStorageOptions {
  /** Root directory; created on the first write. */
  dir: string;
  /** Base URL the directory is served at (null or unset: artifacts have no URL, the body shows the key). */
  publicBaseUrl?: string | null;
}

/**
 * Files under `dir`, the key as the relative path. A write goes to a temporary file beside the target and
 * is renamed over it, so a reader never sees half an artifact. The content type is not kept.
 */
export function createLocalArtifactStorage(options: LocalArtifactStorageOptions): ArtifactStorage {
  const root = resolve(options.dir);
  const base = options.publicBaseUrl ?? null;
  return {
    kind: 'local',
    async put({ key, body }) {
      checkArtifactKey(key);
      const target = resolve(root, ...key.split('/'));
      if (!target.startsWith(root + sep))
        throw new Error(`artifact key ${JSON.stringify(key)} leaves ${root}`);
      const parent = dirname(target);
      await mkdir(parent, { recursive: true });
      // A directory inside the root may be a symbolic link elsewhere: compare the real paths too.
      const [realRoot, realParent] = await Promise.all([realpath(root), realpath(parent)]);
      if (realParent !== realRoot && !realParent.startsWith(realRoot + sep)) {
        throw new Error(`artifact key ${JSON.stringify(key)} leaves ${root} (through a symbolic link)`);
      }
      const temp = `${target}.${process.pid}.${randomUUID()}.tmp`;
      try {
        await writeFile(temp, body, { flag: 'wx' });
        await rename(temp, target);
      } catch (error) {
        await rm(temp, { force: true });
        throw error;
      }
      return { key, url: base === null ? null : publicUrl(base, key) };
    },
  };
}

export interface S3ArtifactStorageOptions {
  bucket: string;
  region: string;
  /** An S3-compatible store's endpoint (unset or null: AWS S3). */
  endpoint?: string | null;
  /** `<endpoint>/<bucket>/<key>` instead of `<bucket>.<endpoint>/<key>`. */
  forcePathStyle?: boolean;
  /** Prepended to every key with one `/` (surrounding slashes dropped). */
  prefix?: string;
  /** Base URL the bucket is served at: URL = `<base>/<stored key>`; unset or null: a presigned GET URL. */
  publicBaseUrl?: string | null;
  /** Lifetime of a presigned URL, 1 to 604800 seconds (default 604800, 7 days, the SigV4 maximum). */
  presignSeconds?: number;
  /** Unset: the AWS SDK's default credential chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, profiles, roles). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Attempts of one request, retries included (default: the SDK's, 3). */
  maxAttempts?: number;
  /** Time limit of one request in ms (default 30000). */
  requestTimeoutMs?: number;
}

export interface S3ArtifactStorage extends ArtifactStorage {
  kind: 's3';
  /** Closes the client's connections. */
  destroy(): void;
}

/** Objects in a bucket, written with PutObject; a 4xx or 5xx answer (after the SDK's retries) throws. */
export function createS3ArtifactStorage(options: S3ArtifactStorageOptions): S3ArtifactStorage {
  const presignSeconds = options.presignSeconds ?? MAX_PRESIGN_SECONDS;
  if (!Number.isInteger(presignSeconds) || presignSeconds < 1 || presignSeconds > MAX_PRESIGN_SECONDS) {
    throw new RangeError(`presignSeconds must be an integer from 1 to ${MAX_PRESIGN_SECONDS}`);
  }
  if (options.bucket.trim() === '') throw new Error('the S3 artifact store needs a bucket');
  const prefix = (options.prefix ?? '').replace(/^\/+|\/+$/g, '');
  const base = options.publicBaseUrl ?? null;
  const client = new S3Client({
    region: options.region,
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    forcePathStyle: options.forcePathStyle ?? false,
    ...(options.credentials ? { credentials: options.credentials } : {}),
    ...(options.maxAttempts !== undefined ? { maxAttempts: options.maxAttempts } : {}),
    // Checksums only where S3 requires them: S3-compatible stores do not all accept the newer defaults.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    // A stalled store fails the write instead of holding the review (the SDK only warns by default).
    requestHandler: {
      connectionTimeout: 5000,
      requestTimeout: options.requestTimeoutMs ?? 30_000,
      throwOnRequestTimeout: true,
    },
  });
  return {
    kind: 's3',
    async put({ key, body, contentType }) {
      checkArtifactKey(key);
      const objectKey = prefix === '' ? key : `${prefix}/${key}`;
      await client.send(
        new PutObjectCommand({
          Bucket: options.bucket,
          Key: objectKey,
          Body: body,
          ContentType: contentType,
        }),
      );
      const url =
        base !== null
          ? publicUrl(base, objectKey)
          : await getSignedUrl(client, new GetObjectCommand({ Bucket: options.bucket, Key: objectKey }), {
              expiresIn: presignSeconds,
            });
      return { key: objectKey, url };
    },
    destroy() {
      client.destroy();
    },
  };
}

/** The store `Config.evidence` names, or null for `VERDICT_EVIDENCE_STORE=none`. */
export function createArtifactStorage(config: EvidenceConfig): ArtifactStorage | null {
  const { store, publicBaseUrl } = config;
  switch (store.kind) {
    case 'none':
      return null;
    case 'local':
      return createLocalArtifactStorage({ dir: store.dir, publicBaseUrl });
    case 's3':
      // The configured bucket, region, endpoint, prefix and path style are the store's options as they are.
      return createS3ArtifactStorage({ ...store, publicBaseUrl });
  }
}
