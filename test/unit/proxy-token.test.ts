import { tokenFor } from '../../src/dashboard/proxy.js';

describe('tokenFor', () => {
  test("an operator route gets the narrowest dashboard token its rule takes; other paths get today's answer", () => {
    const cases: Array<[string, string, string | null]> = [
      ['GET', 'snapshot', 'operatorRead'],
      ['HEAD', 'pr', 'operatorRead'],
      ['GET', 'commands/cmd-1', 'operatorRead'], // bridge or read: the read token
      ['GET', 'keys', 'operatorAdmin'],
      ['POST', 'keys/key-1/revoke', 'operatorAdmin'],
      ['POST', 'commands/requeue', 'operatorCommand'],
      ['PATCH', 'commands/cmd-1', null], // the bridge's only
      ['PATCH', 'repos/acme%2Fweb', 'operatorAdmin'],
      ['PUT', 'memory/knowledge/document', 'operatorAdmin'],
      ['POST', 'queue/requeue-dead', 'operatorAdmin'],
      // No operator route: as before the routes were read.
      ['GET', 'reports/export', 'operatorRead'],
      ['GET', 'no-such-thing', 'operatorRead'],
      ['GET', 'keys/key-1', 'operatorAdmin'],
      ['POST', 'commands', null],
      ['DELETE', 'commands/cmd-1', null],
      ['POST', 'no-such-thing', 'operatorAdmin'],
    ];
    for (const [method, rest, token] of cases) {
      expect([method, rest, tokenFor(method, rest)]).toEqual([method, rest, token]);
    }
  });
});
