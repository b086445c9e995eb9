import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import type { ReplyPublisher } from '../publish/replies.js';
import type { Store } from '../store/index.js';

/** The one dependency object every handler gets (store, config, log, publishers). */
export type AppDeps = {
  store: Store;
  config: Config;
  log: Logger;
  replies: ReplyPublisher;
  /** Wakes the review worker when a review job was enqueued. */
  onReviewEnqueued?: () => void;
};
