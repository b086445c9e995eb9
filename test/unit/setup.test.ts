import type { IncomingMessage } from 'node:http';
import { envValue, withEnvValues } from '../../src/setup/env-file.js';
import { buildManifest, newAppUrl } from '../../src/setup/manifest.js';
import { escapeHtml } from '../../src/html.js';
import { isLocalRequest, SetupStates, STATE_TTL_MS } from '../../src/setup/routes.js';

describe('the .env writer of the first-run setup', () => {
  test('replaces the first assignment in place, drops later ones, appends the rest, keeps every other line', () => {
    const before = [
      '# comment APP_ID=0',
      'export APP_ID=1',
      'OTHER="a b"',
      'PRIVATE_KEY="-----BEGIN-----',
      'old',
      '-----END-----"',
      'APP_ID=2',
      '',
      'LAST=x',
    ].join('\n');
    expect(withEnvValues(before, { APP_ID: '7', PRIVATE_KEY: 'k\ney', NEW: 'n' })).toBe(
      [
        '# comment APP_ID=0',
        'APP_ID=7',
        'OTHER="a b"',
        'PRIVATE_KEY="k\\ney"',
        '',
        'LAST=x',
        'NEW=n',
        '',
      ].join('\n'),
    );
    expect(withEnvValues('', { A: '1' })).toBe('A=1\n');
    expect(withEnvValues('A=0\r\nB=1\r\n', { A: '1' })).toBe('A=1\nB=1\n');
  });

  test('writes plain values bare, multi-line ones quoted with \\n, and refuses what it cannot write safely', () => {
    expect(envValue('Iv1.abc-123_x')).toBe('Iv1.abc-123_x');
    expect(envValue('two words')).toBe('"two words"');
    expect(envValue('a\nb\n')).toBe('"a\\nb\\n"');
    expect(() => envValue('a"b')).toThrow(/cannot be written/);
    expect(() => envValue('a\\nb')).toThrow(/cannot be written/);
  });
});

describe('the setup rules', () => {
  const req = (remoteAddress: string, headers: Record<string, string> = {}) =>
    ({ socket: { remoteAddress }, headers }) as unknown as IncomingMessage;

  test('only loopback peers without proxy headers are local', () => {
    for (const address of ['127.0.0.1', '::1', '::ffff:127.0.0.1'])
      expect(isLocalRequest(req(address))).toBe(true);
    for (const address of ['203.0.113.7', '10.0.0.1', '::ffff:10.0.0.1', '']) {
      expect([address, isLocalRequest(req(address))]).toEqual([address, false]);
    }
    expect(isLocalRequest(req('127.0.0.1', { 'x-forwarded-for': '203.0.113.7' }))).toBe(false);
    expect(isLocalRequest(req('::1', { forwarded: 'for=203.0.113.7' }))).toBe(false);
  });

  test('a state is good once, and only until it expires', () => {
    let now = 0;
    const states = new SetupStates({ now: () => now });
    const a = states.issue();
    const b = states.issue();
    expect(a).not.toBe(b);
    expect(states.consume(a)).toBe(true);
    expect(states.consume(a)).toBe(false);
    expect(states.consume('unknown')).toBe(false);
    now += STATE_TTL_MS;
    expect(states.consume(b)).toBe(false);
  });

  test('the form posts to the user or organisation page; the proxy channel takes the webhooks', () => {
    expect(newAppUrl('https://github.com', null, 's t')).toBe(
      'https://github.com/settings/apps/new?state=s%20t',
    );
    expect(newAppUrl('https://ghe.example', 'acme', 's')).toBe(
      'https://ghe.example/organizations/acme/settings/apps/new?state=s',
    );
    const app = { name: 'V', url: 'https://x', public: false, default_events: [], default_permissions: {} };
    expect(buildManifest(app, 'http://h', 'https://smee.io/abc').hook_attributes.url).toBe(
      'https://smee.io/abc',
    );
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  });
});
