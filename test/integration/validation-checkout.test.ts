import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import nock from 'nock';
import { ProbotOctokit } from 'probot';
import * as tar from 'tar';
import type { GitHubClient } from '../../src/github/client.js';
import { CheckoutError, downloadCheckout } from '../../src/validation/checkout.js';
import { githubTarball } from '../helpers/tarball.js';

/** The scratch checkout: GitHub's tarball route (302 to codeload), unpacked without its top folder. */
const API = 'https://api.github.com';
const CODELOAD = 'https://codeload.github.com';
const SHA = 'd'.repeat(40);

describe('downloadCheckout', () => {
  let root: string;
  beforeAll(() => nock.disableNetConnect());
  afterAll(() => nock.enableNetConnect());
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-checkout-'));
  });
  afterEach(() => {
    nock.cleanAll();
    fs.rmSync(root, { recursive: true, force: true });
  });
  const gh = new ProbotOctokit({
    auth: { token: 'ghs_test' },
    throttle: { enabled: false },
    retry: { enabled: false },
  }) as unknown as GitHubClient;

  function serve(archive: Buffer) {
    nock(API)
      .get(`/repos/acme/web/tarball/${SHA}`)
      .matchHeader('authorization', 'token ghs_test')
      .reply(302, '', { location: `${CODELOAD}/acme/web/legacy.tar.gz/${SHA}` });
    return nock(CODELOAD).get(`/acme/web/legacy.tar.gz/${SHA}`).reply(200, archive);
  }

  test('follows the redirect and unpacks the commit without its top folder', async () => {
    const codeload = serve(
      await githubTarball(path.resolve('fixtures/validation/passing'), 'acme-web-ddddddd'),
    );
    const dir = path.join(root, 'head');
    const { bytes } = await downloadCheckout(gh, { owner: 'acme', repo: 'web', ref: SHA }, dir);
    expect(codeload.isDone()).toBe(true);
    expect(bytes).toBeGreaterThan(0);
    expect(fs.readdirSync(dir).sort()).toEqual(['package-lock.json', 'package.json', 'sum.js', 'test']);
    expect(fs.readFileSync(path.join(dir, 'sum.js'), 'utf8')).toContain('return a + b;');
  });

  test('an archive over the cap stops with an error saying so', async () => {
    serve(await githubTarball(path.resolve('fixtures/validation/passing'), 'acme-web-ddddddd'));
    await expect(
      downloadCheckout(gh, { owner: 'acme', repo: 'web', ref: SHA }, path.join(root, 'head'), {
        maxBytes: 10,
      }),
    ).rejects.toThrow(new CheckoutError('the archive is larger than 0 MiB'));
  });

  test('a missing commit is an error with the HTTP status', async () => {
    nock(API).get(`/repos/acme/web/tarball/${SHA}`).reply(404, { message: 'Not Found' });
    await expect(
      downloadCheckout(gh, { owner: 'acme', repo: 'web', ref: SHA }, path.join(root, 'head')),
    ).rejects.toThrow(/could not download acme\/web@dddddddddddd \(HTTP 404\)/);
  });

  test('entries that climb out of the checkout are not written', async () => {
    const src = path.join(root, 'src');
    fs.mkdirSync(path.join(src, 'top'), { recursive: true });
    fs.writeFileSync(path.join(src, 'top', 'ok.txt'), 'ok');
    fs.writeFileSync(path.join(root, 'evil.txt'), 'evil');
    // An archive whose second entry is `top/../../evil.txt` (preservePaths keeps the `..` in it).
    const chunks: Buffer[] = [];
    const pack = tar.c({ gzip: true, cwd: src, preservePaths: true }, ['top/ok.txt', 'top/../../evil.txt']);
    for await (const c of pack) chunks.push(c as Buffer);
    serve(Buffer.concat(chunks));
    const dir = path.join(root, 'out', 'head');
    await downloadCheckout(gh, { owner: 'acme', repo: 'web', ref: SHA }, dir);
    expect(fs.readFileSync(path.join(dir, 'ok.txt'), 'utf8')).toBe('ok');
    expect(fs.existsSync(path.join(root, 'out', 'evil.txt'))).toBe(false);
    expect(fs.existsSync(path.join(dir, 'evil.txt'))).toBe(false);
  });
});
