/**
 * Every test runs without the network (only this machine's servers answer: GitHub and model providers
 * are nock interceptors or local servers), and a test that leaves a nock interceptor unused fails.
 */
import { assertNoUnusedInterceptors, localNetworkOnly } from '../helpers/network.js';

beforeEach(localNetworkOnly);
afterEach(assertNoUnusedInterceptors);
