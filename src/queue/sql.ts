import type { Store } from '../store/index.js';
import type { QueueBackend } from './types.js';

/** The store's SQL job table as a QueueBackend. */
export function sqlQueue(store: Pick<Store, 'db' | 'jobs'>): QueueBackend {
  return { kind: store.db.dialect, ...bindJobs(store) };
}

/** The SQL job table's operations, bound. */
export function bindJobs(store: Pick<Store, 'jobs'>) {
  const j = store.jobs;
  return {
    enqueue: j.enqueue.bind(j),
    claim: j.claim.bind(j),
    claimMany: j.claimMany.bind(j),
    ackMany: j.ackMany.bind(j),
    renew: j.renew.bind(j),
    ack: j.ack.bind(j),
    fail: j.fail.bind(j),
    release: j.release.bind(j),
    reapExpired: j.reapExpired.bind(j),
    list: j.list.bind(j),
    stats: j.stats.bind(j),
  };
}
