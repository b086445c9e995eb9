import type { ModelProvider } from '../review/providers/index.js';
import { extractJsonCandidate } from '../review/parse-json.js';
import type { Judge, ScoredFinding } from './score.js';

const SYSTEM = [
  'You judge a code reviewer. You are given one bug that was planted in a pull request and the findings the',
  'reviewer reported. Decide whether one of the findings describes that bug (the same defect, even in other',
  'words or at slightly different lines). Answer with one JSON object and nothing else:',
  '{"match": <the number of the finding, or null>, "reason": "<one sentence>"}',
].join(' ');

/**
 * A judge backed by a model: for a planted bug the rules could not match, it asks whether one of the
 * findings describes it. An answer it cannot read, or a failed call, is no match (never a guess).
 */
export function modelJudge(provider: ModelProvider, timeoutMs = 120_000): Judge {
  return async (c, bug, findings: readonly ScoredFinding[]) => {
    const list = findings
      .map(
        (f, i) =>
          `${i + 1}. [${f.severity}] ${f.path ?? '(no path)'}${f.line !== null ? `:${f.line}${f.endLine && f.endLine !== f.line ? `-${f.endLine}` : ''}` : ''}: ${f.title}\n   ${f.body.replace(/\s+/g, ' ').slice(0, 800)}`,
      )
      .join('\n');
    const prompt = [
      `Pull request: ${c.meta.title}`,
      `Planted bug (${bug.category}, ${bug.severity}) in ${bug.path} lines ${bug.lines[0]}-${bug.lines[1]}: ${bug.description}`,
      '',
      'Findings:',
      list,
    ].join('\n');
    try {
      const res = await provider.complete({
        system: SYSTEM,
        messages: [{ role: 'user', content: prompt }],
        timeoutMs,
      });
      const json = extractJsonCandidate(res.text);
      if (!json) return null;
      const value = JSON.parse(json) as { match?: unknown };
      const n = typeof value.match === 'number' ? value.match : Number(value.match);
      return Number.isInteger(n) && n >= 1 && n <= findings.length ? n - 1 : null;
    } catch {
      return null;
    }
  };
}
