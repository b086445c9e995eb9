/**
 * The webhook load of the ingress benchmarks: signed `pull_request.opened` payloads from
 * @octokit/webhooks-examples, a new delivery id on every request, at CONNECTIONS connections (autocannon).
 */
import { createHmac } from 'node:crypto';
import { createRequire } from 'node:module';
import autocannon from 'autocannon';

const require = createRequire(import.meta.url);
const examples: Array<{ name: string; examples: any[] }> = require('@octokit/webhooks-examples');

export const payload = examples
  .find((e) => e.name === 'pull_request')!
  .examples.find((p) => p.action === 'opened');
export const body = JSON.stringify(payload);
export const signed = (secret: string, raw = body): string =>
  'sha256=' + createHmac('sha256', secret).update(raw).digest('hex');

let counter = 0;

/** One load of `seconds` on `url`; delivery ids are `{label}-{pid}-{n}`. */
export function webhookLoad(
  url: string,
  options: { label: string; seconds: number; connections: number; secret: string },
): Promise<autocannon.Result> {
  const signature = signed(options.secret);
  return autocannon({
    url,
    connections: options.connections,
    duration: options.seconds,
    requests: [
      {
        method: 'POST',
        setupRequest: (req: any) => {
          counter++;
          req.headers = {
            'content-type': 'application/json',
            'x-github-event': 'pull_request',
            'x-hub-signature-256': signature,
            'x-github-delivery': `${options.label}-${process.pid}-${counter}`,
          };
          req.body = body;
          return req;
        },
      },
    ],
  });
}
