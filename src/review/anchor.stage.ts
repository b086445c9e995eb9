import { validationFindings } from '../validation/report.js';
import type { ReviewValidation } from '../validation/review.js';
import { checkFindingAnchors, type AnchorReport } from './anchors.js';
import type { ChangedFile } from './context.js';
import type { Finding } from './output.schema.js';
import type { Stage } from './stage.js';

/**
 * Stage `anchor`: the line anchors checked (anchors.ts). A failing check the pull request introduced is
 * a finding of its own, with the output as evidence (validation/report.ts), and joins the kept findings.
 * Every anchor is checked against the pull request's diff at this head: `line`..`endLine` must be
 * new-side lines of one hunk; a failed anchor is removed and the finding stays, unanchored.
 */

export type AnchorInput = {
  /** The findings the filter kept. */
  filtered: { output: { findings: Finding[] } };
  /** The validation beside the review, when it ran. */
  validation: Pick<ReviewValidation, 'report'> | null;
  gathered: { changed: ChangedFile[] };
};

/** A finding from a failing check, with the command that failed (evidence artifacts attach to it). */
export type ValidationFinding = ReturnType<typeof validationFindings>[number];

export type Anchored = {
  report: AnchorReport;
  /** The output's findings: the anchored ones, without the text of their lines. */
  findings: Finding[];
  fromValidation: ValidationFinding[];
};

async function anchor(input: AnchorInput): Promise<Anchored> {
  const { changed } = input.gathered;
  const paths = changed.map((f) => f.filename);
  const fromValidation = input.validation ? validationFindings(input.validation.report, paths) : [];
  const report = checkFindingAnchors(
    [...input.filtered.output.findings, ...fromValidation.map(({ validationCommand: _c, ...f }) => f)],
    changed,
  );
  return { report, findings: report.findings.map(({ lineText: _text, ...f }) => f), fromValidation };
}

export const anchorStage: Stage<AnchorInput, Anchored> = {
  name: 'anchor',
  run: anchor,
  counts: ({ report, fromValidation }) => ({
    findings: report.findings.length,
    fromValidation: fromValidation.length,
    anchorsKept: report.kept,
    anchorsRemoved: report.removed.length,
    suggestionsDropped: report.suggestionsDropped,
  }),
};
