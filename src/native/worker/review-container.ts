/**
 * The review container on Cloudflare (review-engine 4.2, wrangler.jsonc `containers`): a Container-backed
 * Durable Object per run serving the image of src/native/container/Dockerfile on port 8080. Its
 * environment is the allow-list of 8 "Native forwarding" only; its requests to `state.internal` and
 * `broker.internal` are intercepted and answered by this worker (state.ts), so it holds neither the
 * database nor the App key; its validation jobs go to `sandbox.internal`. Locally (no Docker here) the container runs as a process and reaches the
 * same handlers through the dev route of index.ts.
 */
import { Container, ContainerProxy } from '@cloudflare/containers';
import { containerEnv } from '../forwarding.js';
import type { InternalHost } from '../protocol.js';
import type { Env } from './env.js';
import { handleInternal } from './state.js';

export { ContainerProxy };

const intercept = (host: InternalHost) => (request: Request, env: unknown) =>
  handleInternal(host, request, env as Env);

export class ReviewContainer extends Container<Env> {
  override defaultPort = 8080;
  /** Idle containers stop after this long; a review's request keeps its instance awake. */
  override sleepAfter = '10m';

  constructor(ctx: ConstructorParameters<typeof Container<Env>>[0], env: Env) {
    super(ctx, env);
    this.envVars = containerEnv(env as unknown as Record<string, string | undefined>);
  }
}

ReviewContainer.outboundByHost = {
  'state.internal': intercept('state.internal'),
  'broker.internal': intercept('broker.internal'),
  'sandbox.internal': intercept('sandbox.internal'),
};

/**
 * The validation sandbox on Cloudflare (wrangler.jsonc `containers`): a Container-backed Durable Object per
 * run serving the image of src/native/sandbox/Dockerfile on port 8080 (bubblewrap and the validation
 * executors). The worker hands it the jobs the run's container sent to `sandbox.internal` (sandbox.ts); it
 * gets no secret at all: the checkout comes in the job.
 */
export class ValidationSandbox extends Container<Env> {
  override defaultPort = 8080;
  override sleepAfter = '5m';
}
