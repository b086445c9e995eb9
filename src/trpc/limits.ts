/**
 * The most calls one batched tRPC request may carry (400 beyond): one request with a read key ran 500
 * reports, and one admin request created 1,000 commands. The typed client batches at most this many.
 */
export const TRPC_MAX_BATCH = 10;
