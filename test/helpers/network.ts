import nock from 'nock';

const LOCAL = /^(127\.0\.0\.1|localhost|\[::1\]|::1)(:\d+)?$/;

/** Requests to any host but this machine fail (nock's NetConnectNotAllowedError). */
export function localNetworkOnly(): void {
  nock.disableNetConnect();
  nock.enableNetConnect((host: string) => LOCAL.test(host));
}

/**
 * Drops every nock interceptor and throws, naming them, when any was left unused: an interceptor a
 * test declares is a request the test says the code makes.
 */
export function assertNoUnusedInterceptors(): void {
  const pending = nock.pendingMocks();
  nock.cleanAll();
  if (pending.length > 0) {
    throw new Error(`the test left nock interceptors unused:\n  ${pending.join('\n  ')}`);
  }
}
