/**
 * The baseline for the ingress benchmark: a bare Probot app (createNodeMiddleware with an empty handler)
 * on node:http. It verifies the signature and emits the event, and stores nothing.
 */
import { createServer } from 'node:http';
import { generateKeyPairSync } from 'node:crypto';
import { createNodeMiddleware, Probot } from 'probot';
import { pino } from 'pino';

const port = Number(process.env.PORT ?? 8790);
const { privateKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});
const probot = new Probot({
  appId: 1,
  privateKey,
  secret: process.env.WEBHOOK_SECRET,
  log: pino({ level: 'silent' }) as any,
});
const middleware = await createNodeMiddleware(
  (app) => {
    app.on('pull_request', async () => {});
  },
  { probot, webhooksPath: '/github/webhooks' },
);
createServer((req, res) => {
  void middleware(req, res, () => {
    res.writeHead(404);
    res.end();
  });
}).listen(port, '127.0.0.1', () => console.log(`bare probot listening on ${port}`));
