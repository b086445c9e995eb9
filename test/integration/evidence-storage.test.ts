import { createHash, createHmac } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm, symlink, mkdir } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/index.js';
import {
  MAX_PRESIGN_SECONDS,
  type ArtifactStorage,
  createArtifactStorage,
  createLocalArtifactStorage,
  createS3ArtifactStorage,
  type S3ArtifactStorage,
  type S3ArtifactStorageOptions,
} from '../../src/evidence/storage.js';

/**
 * The two artifact stores: a local directory (a temporary one) and S3, against an HTTP server on this
 * machine that answers like S3 and records what it is sent (no test touches the internet).
 */

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'verdict-evidence-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Stores the body `x` as text under `key`. */
const putX = (storage: ArtifactStorage, key: string) =>
  storage.put({ key, body: 'x', contentType: 'text/plain' });

/** Every file under `root`, as relative paths. */
async function files(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(root.length + 1))
    .sort();
}

describe('the local artifact store', () => {
  test('writes the body under the directory with the key as relative path, creating directories', async () => {
    const storage = createLocalArtifactStorage({ dir: join(dir, 'evidence') });
    expect(storage.kind).toBe('local');
    const stored = await storage.put({
      key: 'runs/run-1/local-1-test.log',
      body: 'FAIL src/a.test.ts\n',
      contentType: 'text/plain; charset=utf-8',
    });
    expect(stored).toEqual({ key: 'runs/run-1/local-1-test.log', url: null });
    expect(await readFile(join(dir, 'evidence', 'runs', 'run-1', 'local-1-test.log'), 'utf8')).toBe(
      'FAIL src/a.test.ts\n',
    );
    await storage.put({
      key: 'runs/run-1/b.log',
      body: Buffer.from([0xe2, 0x9c, 0x93]),
      contentType: 'text/plain',
    });
    expect(await readFile(join(dir, 'evidence', 'runs', 'run-1', 'b.log'), 'utf8')).toBe('✓');
  });

  test('a second write replaces the first, and no temporary file is left', async () => {
    const storage = createLocalArtifactStorage({ dir });
    await storage.put({ key: 'runs/r/a.log', body: 'first, longer content', contentType: 'text/plain' });
    await storage.put({ key: 'runs/r/a.log', body: 'second', contentType: 'text/plain' });
    expect(await readFile(join(dir, 'runs', 'r', 'a.log'), 'utf8')).toBe('second');
    expect(await files(dir)).toEqual(['runs/r/a.log']);
  });

  test('concurrent writes of one key leave one whole body, never a mix', async () => {
    const storage = createLocalArtifactStorage({ dir });
    const bodies = ['a', 'b', 'c', 'd', 'e'].map((c) => c.repeat(200_000));
    await Promise.all(bodies.map((body) => storage.put({ key: 'k/x.log', body, contentType: 'text/plain' })));
    expect(bodies).toContain(await readFile(join(dir, 'k', 'x.log'), 'utf8'));
    expect(await files(dir)).toEqual(['k/x.log']);
  });

  test('the URL is the public base URL and the key (segments encoded) when one is set', async () => {
    const storage = createLocalArtifactStorage({ dir, publicBaseUrl: 'https://files.example.test/ev/' });
    const stored = await putX(storage, 'runs/r 1/a#b.log');
    expect(stored).toEqual({
      key: 'runs/r 1/a#b.log',
      url: 'https://files.example.test/ev/runs/r%201/a%23b.log',
    });
  });

  test.each([
    ['../outside.log'],
    ['runs/../../outside.log'],
    ['/etc/passwd'],
    ['runs//a.log'],
    ['runs/./a.log'],
    ['runs\\..\\a.log'],
    ['runs/a\u0000.log'],
    [''],
  ])('refuses the key %j, writing nothing', async (key) => {
    const storage = createLocalArtifactStorage({ dir: join(dir, 'root') });
    await expect(putX(storage, key)).rejects.toThrow(/artifact key/);
    expect(await files(dir)).toEqual([]);
  });

  test('refuses a key that leaves the directory through a symbolic link inside it', async () => {
    const root = join(dir, 'root');
    const outside = join(dir, 'outside');
    await mkdir(root);
    await mkdir(outside);
    await symlink(outside, join(root, 'link'));
    const storage = createLocalArtifactStorage({ dir: root });
    await expect(putX(storage, 'link/a.log')).rejects.toThrow(/symbolic link/);
    expect(await readdir(outside)).toEqual([]);
  });
});

type Received = { method: string; url: string; headers: IncomingHttpHeaders; body: Buffer };

/** An HTTP server that answers like S3: 200 to a PUT (or `status`), and records each request. */
async function fakeS3(status = 200): Promise<{ server: Server; endpoint: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        body: Buffer.concat(chunks),
      });
      if (status === 200) {
        res.writeHead(200, { ETag: '"0123456789abcdef"', 'Content-Length': '0' });
        res.end();
        return;
      }
      const code = status === 403 ? 'AccessDenied' : 'InternalError';
      const xml = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${code} from the test server</Message><RequestId>r1</RequestId></Error>`;
      res.writeHead(status, { 'Content-Type': 'application/xml', 'Content-Length': Buffer.byteLength(xml) });
      res.end(xml);
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return { server, endpoint: `http://127.0.0.1:${port}`, received };
}

/**
 * The AWS Signature Version 4 of a received request, computed here from its method, path, query, signed
 * headers and payload hash (the header x-amz-content-sha256) with `secret`, to compare with the one sent.
 */
function sigV4Signature(request: Received, secret: string): string {
  const auth =
    /Credential=[^/]+\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=/.exec(
      request.headers.authorization ?? '',
    );
  if (!auth) throw new Error('no SigV4 Authorization header');
  const [, date, region, service, signed] = auth as unknown as [string, string, string, string, string];
  const [path, query = ''] = request.url.split('?') as [string, string?];
  const canonicalQuery = query
    .split('&')
    .filter(Boolean)
    .map((pair) =>
      pair
        .split('=')
        .map((part) => encodeURIComponent(decodeURIComponent(part)))
        .join('='),
    )
    .map((pair) => (pair.includes('=') ? pair : `${pair}=`))
    .sort()
    .join('&');
  const names = signed.split(';');
  const canonicalHeaders = names
    .map((n) => `${n}:${String(request.headers[n]).trim().replace(/\s+/g, ' ')}\n`)
    .join('');
  const canonical = [
    request.method,
    path,
    canonicalQuery,
    canonicalHeaders,
    signed,
    String(request.headers['x-amz-content-sha256']),
  ].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', String(request.headers['x-amz-date']), scope, sha256(canonical)].join(
    '\n',
  );
  let key: Buffer = Buffer.from(`AWS4${secret}`);
  for (const part of [date, region, service, 'aws4_request']) key = hmac(key, part);
  return hmac(key, toSign).toString('hex');
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const hmac = (key: Buffer, text: string) => createHmac('sha256', key).update(text).digest();

const CREDENTIALS = { accessKeyId: 'AKIDEXAMPLETEST', secretAccessKey: 'secret-for-tests-only' };

describe('the S3 artifact store against a local S3-like server', () => {
  let s3: Awaited<ReturnType<typeof fakeS3>>;
  let storage: S3ArtifactStorage | undefined;
  afterEach(async () => {
    storage?.destroy();
    storage = undefined;
    await new Promise((done) => s3.server.close(done));
  });

  /** A store of the bucket `bkt` on the fake S3 (answering `status`), path style, with test credentials. */
  async function s3Storage(over: Partial<S3ArtifactStorageOptions> = {}, status = 200) {
    s3 = await fakeS3(status);
    storage = createS3ArtifactStorage({
      bucket: 'bkt',
      region: 'us-east-1',
      endpoint: s3.endpoint,
      forcePathStyle: true,
      credentials: CREDENTIALS,
      ...over,
    });
    return storage;
  }

  test('PUTs the body to /<bucket>/<prefix>/<key> (path style) with its content type, signed with SigV4', async () => {
    storage = await s3Storage({
      bucket: 'verdict-evidence',
      region: 'eu-west-1',
      prefix: '/team-a/',
      publicBaseUrl: 'https://cdn.example.test/evidence',
    });
    const body = 'npm test\n\nFAIL src/a.test.ts\n  expected 1, got 2\n';
    const stored = await storage.put({
      key: 'runs/run-7/local-1-test.log',
      body,
      contentType: 'text/plain; charset=utf-8',
    });

    expect(stored).toEqual({
      key: 'team-a/runs/run-7/local-1-test.log',
      url: 'https://cdn.example.test/evidence/team-a/runs/run-7/local-1-test.log',
    });
    expect(s3.received).toHaveLength(1);
    const [put] = s3.received;
    expect(put!.method).toBe('PUT');
    expect(put!.url.split('?')[0]).toBe('/verdict-evidence/team-a/runs/run-7/local-1-test.log');
    expect(put!.body.toString('utf8')).toBe(body);
    expect(put!.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(put!.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLETEST\/\d{8}\/eu-west-1\/s3\/aws4_request, SignedHeaders=[a-z0-9;-]*host[a-z0-9;-]*, Signature=[0-9a-f]{64}$/,
    );
    expect(put!.headers['x-amz-date']).toMatch(/^\d{8}T\d{6}Z$/);
    const sha = put!.headers['x-amz-content-sha256'];
    // The signature covers the body's hash, and it is the one the secret key gives.
    expect(sha).toBe(createHash('sha256').update(body).digest('hex'));
    expect(sigV4Signature(put!, CREDENTIALS.secretAccessKey)).toBe(
      put!.headers.authorization!.split('Signature=')[1],
    );
    expect(sigV4Signature(put!, 'another-secret')).not.toBe(
      put!.headers.authorization!.split('Signature=')[1],
    );
  });

  test('without a public base URL the URL is a presigned GET of the object, valid 7 days by default', async () => {
    const stored = await (
      await s3Storage()
    ).put({
      key: 'runs/r/x.log',
      body: Buffer.from('out'),
      contentType: 'text/plain',
    });
    expect(stored.key).toBe('runs/r/x.log');
    const url = new URL(stored.url!);
    expect(`${url.origin}${url.pathname}`).toBe(`${s3.endpoint}/bkt/runs/r/x.log`);
    expect(url.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    expect(url.searchParams.get('X-Amz-Algorithm')).toBe('AWS4-HMAC-SHA256');
    expect(url.searchParams.get('X-Amz-Credential')).toMatch(
      /^AKIDEXAMPLETEST\/\d{8}\/us-east-1\/s3\/aws4_request$/,
    );
    expect(url.searchParams.get('X-Amz-Expires')).toBe(String(MAX_PRESIGN_SECONDS));
    // Presigning is local: only the PUT reached the server.
    expect(s3.received.map((r) => r.method)).toEqual(['PUT']);
  });

  test('presignSeconds sets the lifetime; out of range it is refused', async () => {
    const { url } = await putX(await s3Storage({ presignSeconds: 3600 }), 'a.log');
    expect(new URL(url!).searchParams.get('X-Amz-Expires')).toBe('3600');
    for (const presignSeconds of [0, MAX_PRESIGN_SECONDS + 1, 1.5]) {
      expect(() => createS3ArtifactStorage({ bucket: 'b', region: 'us-east-1', presignSeconds })).toThrow(
        RangeError,
      );
    }
  });

  test('a 403 from the store surfaces as an error', async () => {
    await expect(putX(await s3Storage({}, 403), 'a.log')).rejects.toThrow(
      /AccessDenied from the test server/,
    );
    expect(s3.received).toHaveLength(1);
  });

  test('a 500 from the store surfaces as an error after the retries', async () => {
    await expect(putX(await s3Storage({ maxAttempts: 2 }, 500), 'a.log')).rejects.toThrow(
      /InternalError from the test server/,
    );
    expect(s3.received.map((r) => `${r.method} ${r.url.split('?')[0]}`)).toEqual([
      'PUT /bkt/a.log',
      'PUT /bkt/a.log',
    ]);
  });

  test('a store that does not answer fails after the request time limit', async () => {
    const silent = createServer(() => {
      // Never answers.
    });
    await new Promise<void>((done) => silent.listen(0, '127.0.0.1', done));
    // If the write never fails, the test times out without this server keeping Jest alive.
    silent.unref();
    silent.on('connection', (socket) => socket.unref());
    try {
      const unanswered = await s3Storage({
        endpoint: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`,
        maxAttempts: 1,
        requestTimeoutMs: 300,
      });
      const started = Date.now();
      await expect(putX(unanswered, 'a.log')).rejects.toThrow(
        /exceeded the configured 300 ms requestTimeout/,
      );
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      storage?.destroy();
      storage = undefined;
      silent.closeAllConnections();
      await new Promise((done) => silent.close(done));
    }
  });

  test('refuses a key that could leave the prefix, sending nothing', async () => {
    await expect(putX(await s3Storage({ prefix: 'p' }), '../a.log')).rejects.toThrow(/artifact key/);
    expect(s3.received).toEqual([]);
  });

  test('createArtifactStorage builds the configured store; s3 signs with the default credential chain', async () => {
    s3 = await fakeS3();
    expect(createArtifactStorage(loadConfig({ VERDICT_EVIDENCE_STORE: 'none' }).evidence)).toBeNull();

    const local = createArtifactStorage(
      loadConfig({
        VERDICT_EVIDENCE_DIR: join(dir, 'ev'),
        VERDICT_EVIDENCE_PUBLIC_BASE_URL: 'http://h.test/e/',
      }).evidence,
    );
    expect(local?.kind).toBe('local');
    expect(await putX(local!, 'runs/r/a.log')).toEqual({
      key: 'runs/r/a.log',
      url: 'http://h.test/e/runs/r/a.log',
    });
    expect(await readFile(join(dir, 'ev', 'runs', 'r', 'a.log'), 'utf8')).toBe('x');

    const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
    process.env.AWS_ACCESS_KEY_ID = 'AKIDFROMENVCHAIN';
    process.env.AWS_SECRET_ACCESS_KEY = 'env-secret';
    try {
      const remote = createArtifactStorage(
        loadConfig({
          VERDICT_EVIDENCE_STORE: 's3',
          VERDICT_EVIDENCE_S3_BUCKET: 'cfg-bucket',
          VERDICT_EVIDENCE_S3_ENDPOINT: s3.endpoint,
          VERDICT_EVIDENCE_S3_FORCE_PATH_STYLE: '1',
          VERDICT_EVIDENCE_S3_PREFIX: 'pre',
        }).evidence,
      ) as S3ArtifactStorage;
      storage = remote;
      expect(remote.kind).toBe('s3');
      const stored = await remote.put({ key: 'runs/r/a.log', body: 'y', contentType: 'text/plain' });
      expect(stored.key).toBe('pre/runs/r/a.log');
      expect(stored.url).toContain('X-Amz-Signature=');
      expect(s3.received[0]!.url.split('?')[0]).toBe('/cfg-bucket/pre/runs/r/a.log');
      expect(s3.received[0]!.headers.authorization).toMatch(
        /Credential=AKIDFROMENVCHAIN\/\d{8}\/us-east-1\/s3\//,
      );
    } finally {
      if (saved.id === undefined) delete process.env.AWS_ACCESS_KEY_ID;
      else process.env.AWS_ACCESS_KEY_ID = saved.id;
      if (saved.secret === undefined) delete process.env.AWS_SECRET_ACCESS_KEY;
      else process.env.AWS_SECRET_ACCESS_KEY = saved.secret;
    }
  });
});
