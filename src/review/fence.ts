/**
 * A fenced block its content cannot close early (a fence longer than any run of backticks in it). In a
 * prompt, text from outside Verdict (a pull request, an issue, memory, a command's output) goes in one:
 * data, never instructions. In a comment, it keeps a block whole whatever it holds.
 */
export function fenced(content: string, info = 'text'): string {
  const longest = Math.max(2, ...(content.match(/`+/g) ?? []).map((m) => m.length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${info}\n${content.replace(/\r\n?/g, '\n')}\n${fence}`;
}
