/**
 * What a neutral check run says when a review was refused in a way the pull request's author or an
 * operator can act on (NAMES.md "Installed means reviewed"): a title naming the refusal and one line with
 * why and what to change. The hint comes from admission (src/review/admission.ts), which knows the rule.
 */
export function refusalNotice(
  productName: string,
  notice: { reason: string; detail: string; hint: string | null },
): { title: string; summary: string } {
  const title =
    notice.reason === 'repository_disabled'
      ? `Not reviewed: ${productName} is not enabled for this repository`
      : 'Not reviewed automatically';
  const why = notice.detail.replace(/\.$/, '');
  const summary = notice.hint
    ? `${productName} did not review this pull request: ${why}. To change that, ${notice.hint}.`
    : `${productName} did not review this pull request: ${why}.`;
  return { title, summary };
}
