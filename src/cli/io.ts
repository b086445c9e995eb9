/** What a CLI command reads and writes: its output streams and environment, injected for tests. */
export type Io = {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
  isTty: boolean;
};

/** Prints `json` under `--json`, else the human text. */
export type Print = (json: unknown, human: () => string) => void;

/** A refusal the CLI prints as one line on stderr, exiting 1. */
export class CliError extends Error {}
