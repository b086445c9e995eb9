import { signPayload, verifySignature } from '../../src/ingress/signature.js';

describe('webhook signature', () => {
  // GitHub's published test vector ("Validating webhook deliveries").
  const secret = "It's a Secret to Everybody";
  const body = Buffer.from('Hello, World!');
  const expected = 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';

  test("matches GitHub's test vector", () => {
    expect(signPayload(secret, body)).toBe(expected);
    expect(verifySignature(secret, body, expected)).toBe(true);
  });

  test.each([
    ['a tampered body', secret, Buffer.from('Hello, World?'), expected],
    ['a wrong secret', 'another secret', body, expected],
    ['a missing header', secret, body, undefined],
    ['an empty header', secret, body, ''],
    ['a sha1 signature', secret, body, 'sha1=' + expected.slice(7, 47)],
    [
      'upper-case hex (GitHub sends lower-case)',
      secret,
      body,
      expected.toUpperCase().replace('SHA256', 'sha256'),
    ],
    ['a truncated signature', secret, body, expected.slice(0, -2)],
    ['non-hex characters', secret, body, expected.slice(0, -1) + 'g'],
  ])('rejects %s', (_name, s, b, header) => {
    expect(verifySignature(s as string, b as Buffer, header as string | undefined)).toBe(false);
  });
});
