import type { Store } from '../store/index.js';
import type { QueueBackend } from './types.js';

/** The store's SQL job table as a QueueBackend. */
export function sqlQueue(store: Pick<Store, 'jobs'>): QueueBackend {
  return store.jobs;
}
