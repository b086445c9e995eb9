/** What a CLI command reads and writes: its output streams and environment, injected for tests. */
export type Io = {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
  isTty: boolean;
};

/** A refusal the CLI prints as one line on stderr, exiting 1. */
export class CliError extends Error {}
