/** Human output of the CLI: aligned columns, bold headers and coloured statuses on a terminal only. */

const CODES = { bold: 1, dim: 2, red: 31, green: 32, yellow: 33, cyan: 36 } as const;
export type Colour = keyof typeof CODES;

export type Painter = (text: string, colour: Colour) => string;

/** Colour when stdout is a terminal and `NO_COLOR` is unset (https://no-color.org). */
export function painter(isTty: boolean, env: NodeJS.ProcessEnv = process.env): Painter {
  const on = isTty && env.NO_COLOR === undefined;
  return (text, colour) => (on ? `\u001b[${CODES[colour]}m${text}\u001b[0m` : text);
}

/** The colour of a status word: green for good ends, red for failures, yellow for waiting. */
export function statusColour(status: string): Colour {
  if (/^(completed|succeeded|published|analysed|clear|ok|processed)$/.test(status)) return 'green';
  if (/^(failed|error|dead|needs-attention|BLOCK)$/.test(status)) return 'red';
  if (
    /^(queued|running|pending|sending|waiting|skipped|superseded|shadowed|degraded|CAUTION)$/.test(status)
  ) {
    return 'yellow';
  }
  return 'cyan';
}

/** Renders rows as an aligned table; `paint` colours cells after alignment (so escapes never skew widths). */
export function table(
  headers: string[],
  rows: string[][],
  paint: Painter,
  cellColour: (column: number, value: string) => Colour | null = () => null,
): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[], colourOf: (i: number, v: string) => Colour | null) =>
    cells
      .map((cell, i) => {
        const padded = i === cells.length - 1 ? cell : cell.padEnd(widths[i]!);
        const colour = colourOf(i, cell);
        return colour ? paint(padded, colour) : padded;
      })
      .join('  ')
      .trimEnd();
  return [line(headers, () => 'bold'), ...rows.map((r) => line(r, cellColour))].join('\n');
}

export function when(epochMs: number | null): string {
  return epochMs === null ? '-' : new Date(epochMs).toISOString().replace('T', ' ').slice(0, 19);
}
