import { randomId, systemClock, type Clock, type IdGenerator } from '../clock.js';
import { ApiKeyStore } from './api-keys.js';
import { AuditStore } from './audit.js';
import { CommandStore } from './commands.js';
import { PolicyStore } from './policy.js';
import type { Knex } from 'knex';
import type { Config, StoreConfig } from '../config/index.js';
import { CommentCommandStore } from './comment-commands.js';
import { openDb, ShownWrites, writeTransaction, type Db } from './db.js';
import { DeliveryStore } from './deliveries.js';
import { AlertStore } from './alerts.js';
import { MemoryStore } from './memory.js';
import { FeedbackStore } from './feedback.js';
import { SuppressionStore } from './suppression.js';
import { CompetitorReviewStore } from './competitors.js';
import { FindingStore } from './findings.js';
import { TraceStore } from './traces.js';
import { JobStore } from './jobs.js';
import { PublicationStore } from './publications.js';
import { PullRequestStore } from './pull-requests.js';
import { RepositoryStore } from './repositories.js';
import { RunStore } from './runs.js';
import { SchedulerStore } from './scheduler.js';
import { HarnessStore } from './harness.js';
import { TestLabStore } from './testlab.js';
import { ReviewThreadStore } from './review-threads.js';
import { OperatorReadModels } from './operator-reads.js';
import { UiSessionStore } from './ui-sessions.js';
import { ExecutorCostStore } from './executor-costs.js';

/** Every table family behind one object; the only place that speaks SQL. */
export type Store = ReturnType<typeof createStore>;

/** A write transaction of the store, handed to store methods that take one. */
export type StoreTransaction = Knex.Transaction;

export type StoreOptions = { clock: Clock; ids: IdGenerator; dedupeTtlSeconds: number };

export function createStore(db: Db, opts: StoreOptions) {
  const shown = new ShownWrites();
  return {
    db,
    jobs: new JobStore(db.knex, db.dialect, opts.clock, opts.ids),
    deliveries: new DeliveryStore(db.knex, db.dialect, opts.clock, opts.dedupeTtlSeconds * 1000, shown),
    pullRequests: new PullRequestStore(db.knex, opts.clock, shown),
    repositories: new RepositoryStore(db.knex, opts.clock, shown),
    runs: new RunStore(db.knex, opts.clock, opts.ids, shown),
    commentCommands: new CommentCommandStore(db.knex, opts.clock),
    publications: new PublicationStore(db.knex, opts.clock, shown),
    audit: new AuditStore(db.knex, opts.clock),
    apiKeys: new ApiKeyStore(db.knex, opts.clock, opts.ids),
    commands: new CommandStore(db.knex, opts.clock, shown),
    policy: new PolicyStore(db.knex, opts.clock),
    findings: new FindingStore(db.knex, opts.clock, shown),
    traces: new TraceStore(db.knex, opts.clock),
    memory: new MemoryStore(db.knex, opts.clock, opts.ids, shown),
    /** Feedback on Verdict's line comments, folded into memory clusters. */
    feedback: new FeedbackStore(db.knex, opts.clock, opts.ids, shown),
    /** What a review reads and writes to withhold findings like dismissed ones. */
    suppression: new SuppressionStore(db.knex, opts.clock, shown),
    alerts: new AlertStore(db.knex, opts.clock, opts.ids),
    competitors: new CompetitorReviewStore(db.knex, opts.clock),
    scheduler: new SchedulerStore(db.knex, opts.clock),
    harness: new HarnessStore(db.knex, opts.clock),
    testLab: new TestLabStore(db.knex, opts.clock),
    reviewThreads: new ReviewThreadStore(db.knex, opts.clock),
    /** Dashboard sessions (hashed tokens). */
    uiSessions: new UiSessionStore(db.knex, opts.clock),
    /** Recorded cost of paid validation executors (e2b); its total is what the e2b budget reads. */
    executorCosts: new ExecutorCostStore(db.knex, opts.clock, opts.ids),
    /** The operator's read models (snapshot, PR detail, analytics, usage, report source). */
    reads: new OperatorReadModels(db.knex, db.dialect),
    /** The store's writes to the tables the operator's reads show: the read caches subscribe to it. */
    shownWrites: shown,
    /** Runs `work` in one write transaction (db.ts `writeTransaction`); store methods take its `trx`. */
    write: <T>(work: (trx: StoreTransaction) => Promise<T>): Promise<T> => writeTransaction(db.knex, work),
    close: () => db.close(),
  };
}

/** Opens (and migrates) the store described by the config. */
export async function openStore(config: StoreConfig, opts: StoreOptions): Promise<Store> {
  return createStore(await openDb(config), opts);
}

/** The store a process's configuration names, on the system clock (the worker, bridge, CLI and scripts). */
export function openConfiguredStore(config: Pick<Config, 'store' | 'dedupeTtlSeconds'>): Promise<Store> {
  return openStore(config.store, {
    clock: systemClock,
    ids: randomId,
    dedupeTtlSeconds: config.dedupeTtlSeconds,
  });
}
