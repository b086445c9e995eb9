import type { ReviewOutput } from './output.schema.js';

/**
 * One usable answer of a part (a part split in two has two or more); `removedContextIds`: the cited ids
 * that were not supplied, removed from its findings.
 */
export type PartOutput = {
  output: ReviewOutput;
  warnings: string[];
  unreadable: number;
  removedContextIds?: number;
};

/** How one model pass over all parts went (primary or shadow). */
export type PassResult = {
  /** The usable answers, in part order. */
  outputs: Array<PartOutput & { chunk: number }>;
  /** The parts that failed, with the first error. */
  failed: Map<number, string>;
  /** Whether some failure was one that trying again later can fix (timeout, 5xx, rate limit). */
  retryable: boolean;
  /** Parts split in two because an answer was cut at the output token limit. */
  splits: number;
};
