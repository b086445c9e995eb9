import { createHmac } from 'node:crypto';

import { signPayload, verifySignature } from '../../src/ingress/signature.js';

// GitHub's published test vector ("Validating webhook deliveries").
const SECRET = "It's a Secret to Everybody";
const BODY = Buffer.from('Hello, World!');
const EXPECTED = 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';
const HEX = EXPECTED.slice('sha256='.length);

describe('signPayload', () => {
  test("produces GitHub's test vector", () => {
    expect(signPayload(SECRET, BODY)).toBe(EXPECTED);
  });

  test('signs a string body the same as its UTF-8 bytes', () => {
    expect(signPayload(SECRET, 'Hello, World!')).toBe(EXPECTED);
  });

  test('depends on the secret and on the body', () => {
    expect(signPayload('another secret', BODY)).not.toBe(EXPECTED);
    expect(signPayload(SECRET, 'Hello, World?')).not.toBe(EXPECTED);
    expect(signPayload(SECRET, BODY)).toMatch(/^sha256=[0-9a-f]{64}$/);
  });
});

describe('verifySignature', () => {
  test("accepts GitHub's test vector", () => {
    expect(verifySignature(SECRET, BODY, EXPECTED)).toBe(true);
  });

  test('verifies the raw bytes, not a re-serialisation of them', () => {
    // Bytes that are not valid UTF-8 and JSON whose re-serialisation would differ both verify as sent.
    const raw = Buffer.concat([Buffer.from('{"a": 1,  "b":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    const header = 'sha256=' + createHmac('sha256', SECRET).update(raw).digest('hex');
    expect(verifySignature(SECRET, raw, header)).toBe(true);
    expect(verifySignature(SECRET, Buffer.from(raw.toString('utf8')), header)).toBe(false);
  });

  test('rejects a tampered body', () => {
    expect(verifySignature(SECRET, Buffer.from('Hello, World?'), EXPECTED)).toBe(false);
    expect(verifySignature(SECRET, Buffer.from('Hello, World! '), EXPECTED)).toBe(false);
  });

  test('rejects a wrong secret', () => {
    expect(verifySignature("It's a secret to everybody", BODY, EXPECTED)).toBe(false);
  });

  test('rejects an empty secret even with a signature made under it (fails closed)', () => {
    const underEmptyKey = 'sha256=' + createHmac('sha256', '').update(BODY).digest('hex');
    expect(verifySignature('', BODY, underEmptyKey)).toBe(false);
  });

  // Decision: only lower-case hex is accepted; GitHub always sends lower-case.
  test('rejects upper-case hex', () => {
    expect(verifySignature(SECRET, BODY, 'sha256=' + HEX.toUpperCase())).toBe(false);
    expect(verifySignature(SECRET, BODY, 'SHA256=' + HEX)).toBe(false);
    expect(verifySignature(SECRET, BODY, EXPECTED.toUpperCase())).toBe(false);
  });

  test.each([
    ['undefined', undefined],
    ['null', null],
    ['an empty string', ''],
  ])('rejects a missing header (%s)', (_name, header) => {
    expect(verifySignature(SECRET, BODY, header)).toBe(false);
  });

  test('rejects a sha1= signature, valid or re-labelled', () => {
    const sha1 = 'sha1=' + createHmac('sha1', SECRET).update(BODY).digest('hex');
    expect(verifySignature(SECRET, BODY, sha1)).toBe(false);
    expect(verifySignature(SECRET, BODY, 'sha1=' + HEX)).toBe(false);
  });

  test.each([
    ['no prefix', HEX],
    ['a truncated digest', EXPECTED.slice(0, -2)],
    ['an odd-length digest', EXPECTED.slice(0, -1)],
    ['an extended digest', EXPECTED + '00'],
    ['a non-hex digit', EXPECTED.slice(0, -1) + 'g'],
    ['surrounding whitespace', ` ${EXPECTED} `],
    ['two signatures', `${EXPECTED},${EXPECTED}`],
    ['a bare prefix', 'sha256='],
  ])('rejects %s without throwing', (_name, header) => {
    expect(() => verifySignature(SECRET, BODY, header)).not.toThrow();
    expect(verifySignature(SECRET, BODY, header)).toBe(false);
  });

  test('never throws on a header that is not a string at run time', () => {
    const odd = [[EXPECTED], 42, {}] as unknown as string[];
    for (const header of odd) expect(verifySignature(SECRET, BODY, header)).toBe(false);
  });
});
