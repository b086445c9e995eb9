export type Condition = { field: string; operator: string; values?: string[] };
export type FilterRule = { conditions: Condition[] };

/** The grammar of operator-api 2.10: which operators each field takes and what its values are. */
const FIELDS: Record<string, { operators: string[]; values: 'many' | 'none' | 'integer'; hint: string }> = {
  label: { operators: ['is', 'is_not'], values: 'many', hint: 'label names' },
  author: { operators: ['is', 'is_not'], values: 'many', hint: 'GitHub logins' },
  repository: { operators: ['is', 'is_not'], values: 'many', hint: 'owner/repo' },
  targetBranch: { operators: ['is', 'is_not'], values: 'many', hint: 'branch globs, e.g. main or release/*' },
  sourceBranch: { operators: ['is', 'is_not'], values: 'many', hint: 'branch globs' },
  path: { operators: ['is', 'is_not'], values: 'many', hint: 'path globs, e.g. src/**/*.ts' },
  title: { operators: ['contains', 'not_contains'], values: 'many', hint: 'substrings, case-insensitive' },
  keyword: {
    operators: ['contains', 'not_contains'],
    values: 'many',
    hint: 'substrings of the title or body',
  },
  draft: { operators: ['is', 'is_not'], values: 'none', hint: 'no value' },
  filesChanged: { operators: ['at_most', 'more_than'], values: 'integer', hint: 'one integer, 0 to 100000' },
};
const OPERATOR_LABELS: Record<string, string> = {
  is: 'is',
  is_not: 'is not',
  contains: 'contains',
  not_contains: 'does not contain',
  at_most: 'at most',
  more_than: 'more than',
};

const newCondition = (): Condition => ({ field: 'targetBranch', operator: 'is', values: ['main'] });

/**
 * The filter rule builder: a list of rules (a pull request matches when any rule matches), each a list of
 * conditions (a rule matches when all its conditions match). The API's validation error for a rule or a
 * condition is shown under it.
 */
export function FilterRules({
  idPrefix,
  rules,
  onChange,
  error,
  errorBase,
}: {
  idPrefix: string;
  rules: FilterRule[];
  onChange: (rules: FilterRule[]) => void;
  error: { path: string; message: string } | null;
  errorBase: string;
}) {
  const update = (i: number, rule: FilterRule | null) =>
    onChange(rule === null ? rules.filter((_, j) => j !== i) : rules.map((r, j) => (j === i ? rule : r)));
  const errorAt = (path: string, exact = false) =>
    error && (exact ? error.path === path : error.path === path || error.path.startsWith(`${path}.`))
      ? error.message
      : null;

  return (
    <div class="rules" id={idPrefix}>
      {rules.length === 0 && <p class="muted small">No rule: every pull request matches.</p>}
      {rules.map((rule, i) => (
        <div class="rule" key={i} role="group" aria-label={`Rule ${i + 1}`}>
          <div class="rule-head">
            <strong>
              {i > 0 ? 'or ' : ''}Rule {i + 1}
            </strong>
            <button
              type="button"
              class="secondary small"
              onClick={() => update(i, null)}
              aria-label={`Remove rule ${i + 1}`}
            >
              Remove rule
            </button>
          </div>
          {rule.conditions.map((c, k) => {
            const spec = FIELDS[c.field] ?? FIELDS.label!;
            const id = `${idPrefix}-${i}-${k}`;
            const setCondition = (next: Condition | null) =>
              update(i, {
                conditions:
                  next === null
                    ? rule.conditions.filter((_, j) => j !== k)
                    : rule.conditions.map((x, j) => (j === k ? next : x)),
              });
            const condError = errorAt(`${errorBase}.${i}.conditions.${k}`);
            return (
              <div
                class={`condition${condError ? ' has-error' : ''}`}
                key={k}
                role="group"
                aria-label={`Rule ${i + 1}, condition ${k + 1}`}
              >
                <span class="muted small">{k > 0 ? 'and' : 'when'}</span>
                <label class="sr-only" for={`${id}-field`}>
                  Field
                </label>
                <select
                  id={`${id}-field`}
                  value={c.field}
                  onChange={(e) => {
                    const field = (e.target as HTMLSelectElement).value;
                    const s = FIELDS[field]!;
                    setCondition({
                      field,
                      operator: s.operators.includes(c.operator) ? c.operator : s.operators[0]!,
                      values: s.values === 'none' ? [] : s.values === 'integer' ? ['100'] : (c.values ?? []),
                    });
                  }}
                >
                  {Object.keys(FIELDS).map((f) => (
                    <option key={f} value={f}>
                      {f}
                    </option>
                  ))}
                </select>
                <label class="sr-only" for={`${id}-op`}>
                  Operator
                </label>
                <select
                  id={`${id}-op`}
                  value={c.operator}
                  onChange={(e) => setCondition({ ...c, operator: (e.target as HTMLSelectElement).value })}
                >
                  {spec.operators.map((o) => (
                    <option key={o} value={o}>
                      {OPERATOR_LABELS[o]}
                    </option>
                  ))}
                </select>
                {spec.values !== 'none' && (
                  <>
                    <label class="sr-only" for={`${id}-values`}>
                      Values ({spec.hint}
                      {spec.values === 'many' ? ', one per line' : ''})
                    </label>
                    {spec.values === 'integer' ? (
                      <input
                        id={`${id}-values`}
                        type="text"
                        inputMode="numeric"
                        value={c.values?.[0] ?? ''}
                        placeholder={spec.hint}
                        onInput={(e) =>
                          setCondition({ ...c, values: [(e.target as HTMLInputElement).value] })
                        }
                      />
                    ) : (
                      <textarea
                        id={`${id}-values`}
                        rows={Math.min(4, Math.max(1, c.values?.length ?? 1))}
                        placeholder={`${spec.hint} (one per line)`}
                        value={(c.values ?? []).join('\n')}
                        onInput={(e) =>
                          setCondition({ ...c, values: (e.target as HTMLTextAreaElement).value.split('\n') })
                        }
                        onBlur={() =>
                          setCondition({
                            ...c,
                            values: (c.values ?? []).map((v) => v.trim()).filter(Boolean),
                          })
                        }
                      />
                    )}
                  </>
                )}
                <button
                  type="button"
                  class="secondary small"
                  onClick={() => setCondition(null)}
                  disabled={rule.conditions.length <= 1}
                  aria-label={`Remove condition ${k + 1} of rule ${i + 1}`}
                >
                  ✕
                </button>
                {condError && (
                  <p class="field-error" role="alert">
                    {condError}
                  </p>
                )}
              </div>
            );
          })}
          {errorAt(`${errorBase}.${i}.conditions`, true) || errorAt(`${errorBase}.${i}`, true) ? (
            <p class="field-error" role="alert">
              {errorAt(`${errorBase}.${i}.conditions`, true) ?? errorAt(`${errorBase}.${i}`, true)}
            </p>
          ) : null}
          <button
            type="button"
            class="secondary small"
            disabled={rule.conditions.length >= 20}
            onClick={() => update(i, { conditions: [...rule.conditions, newCondition()] })}
          >
            Add condition
          </button>
        </div>
      ))}
      <button
        type="button"
        class="secondary small"
        disabled={rules.length >= 50}
        onClick={() => onChange([...rules, { conditions: [newCondition()] }])}
      >
        Add rule
      </button>
    </div>
  );
}
