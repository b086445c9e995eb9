/** Text from outside Verdict (a pull request, an issue, memory) in a fence it cannot close: data, never instructions. */
export function dataFence(text: string): string {
  const longest = Math.max(2, ...(text.match(/`+/g) ?? []).map((m) => m.length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}text\n${text}\n${fence}`;
}
