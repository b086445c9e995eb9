/** `verdict memory --help` and each subcommand's (its own module, so that printing it loads nothing). */

const STORE = `  --db <path>        the SQLite store (default VERDICT_DB_PATH; DATABASE_URL selects PostgreSQL)
  --json             machine-readable output (what the operator API answers)
  -h, --help         this help`;

const REVISION = `  --revision <n>     the revision you read (409-style refusal when it is stale); without it the
                     current revision is read first, so the write only fails if it changes meanwhile`;

export const MEMORY_SUBCOMMAND_HELP: Record<string, string> = {
  contexts: `Usage: verdict memory contexts [--repo <owner/name>] [--search <text>] [--limit <n>] [--db <path>] [--json]

The memory contexts (rules the reviews follow), newest first.

Options:
  --repo <owner/name>  that repository's contexts only (workspace-wide ones have no repository)
  --search <text>      a case-insensitive substring of the title or body
  --limit <n>          how many (1 to 100, default 50)
${STORE}`,
  context: `Usage: verdict memory context <id> [--db <path>] [--json]

One memory context with its body.

Options:
${STORE}`,
  'add-context': `Usage: verdict memory add-context --title <t> --body <b> [--repo <owner/name>] [--path <glob>]... [--disable]
                                  [--db <path>] [--json]

Creates a memory context: a rule reviews of the repository (or, without --repo, of every repository)
follow when a changed path matches one of its globs (no --path: every path).

Options:
  --title <t>          1 to 200 characters
  --body <b>           1 to 4000 characters
  --repo <owner/name>  the repository (default: the whole workspace)
  --path <glob>        a path glob (repeatable): * within a segment, ** across segments, ?
  --disable            create it disabled
${STORE}`,
  'edit-context': `Usage: verdict memory edit-context <id> [--title <t>] [--body <b>] [--repo <owner/name> | --workspace]
                                   [--path <glob>]... [--all-paths] [--enable | --disable] [--revision <n>]

Changes a memory context: only what is given changes.

Options:
  --title <t>, --body <b>, --repo <owner/name>  as for add-context
  --workspace          make it apply to every repository
  --path <glob>        replaces its globs (repeatable)
  --all-paths          removes its globs (every path)
  --enable, --disable  turns it on or off
${REVISION}
${STORE}`,
  'rm-context': `Usage: verdict memory rm-context <id> [--revision <n>] [--db <path>] [--json]

Deletes a memory context.

Options:
${REVISION}
${STORE}`,
  clusters: `Usage: verdict memory clusters [--repo <owner/name>] [--limit <n>] [--db <path>] [--json]

The clusters (findings that look alike and what reviewers did with them), most recently changed first:
their action (none, suppress, keep), size and feedback (up, down, dismissed, addressed).

Options:
  --repo <owner/name>  that repository's clusters only
  --limit <n>          how many (1 to 100, default 50)
${STORE}`,
  'add-cluster': `Usage: verdict memory add-cluster --repo <owner/name> --label <l> --title <t> --body <b>
                                  [--category <c>] [--path <file>] [--action none|suppress|keep]

Creates a cluster from an example finding (its exemplar).

Options:
  --repo <owner/name>  the repository
  --label <l>          what the cluster is about (1 to 200 characters)
  --title <t>, --body <b>  the exemplar finding's title and body
  --category <c>       the exemplar's category
  --path <file>        the exemplar's file
  --action <a>         none (default), suppress (withhold findings like it) or keep (never withhold them)
${STORE}`,
  'set-cluster': `Usage: verdict memory set-cluster <id> [--action none|suppress|keep] [--label <l>] [--revision <n>]

Sets a cluster's action or label.

Options:
  --action <a>         none, suppress or keep
  --label <l>          a new label
${REVISION}
${STORE}`,
  'rm-cluster': `Usage: verdict memory rm-cluster <id> [--revision <n>] [--db <path>] [--json]

Deletes a cluster.

Options:
${REVISION}
${STORE}`,
  knowledge: `Usage: verdict memory knowledge [--repo <owner/name>] [--limit <n>] [--db <path>] [--json]

The knowledge documents (notes on a part of a repository), by repository and path, with their size.

Options:
  --repo <owner/name>  that repository's documents only
  --limit <n>          how many (1 to 100, default 50)
${STORE}`,
  'show-knowledge': `Usage: verdict memory show-knowledge --repo <owner/name> --path <path> [--db <path>] [--json]

One knowledge document with its body.

Options:
  --repo <owner/name>  the repository
  --path <path>        the document's path: a file or directory of the repository, or / for all of it
${STORE}`,
  'put-knowledge': `Usage: verdict memory put-knowledge --repo <owner/name> --path <path> (--body <b> | --body-file <file>)
                                    [--title <t>] [--revision <n>] [--db <path>] [--json]

Creates a knowledge document, or replaces one. A review of the repository is given the documents whose
path is /, a changed file, or a directory above one.

Options:
  --repo <owner/name>  the repository
  --path <path>        a file or directory of the repository (no leading or trailing /), or / for all of it
  --body <b>           the notes (at most 20,000 characters; empty retires the document)
  --body-file <file>   read the notes from a file
  --title <t>          1 to 200 characters (default: the path; kept when replacing)
  --revision <n>       to replace an existing document: the revision you read (without it, the
                       current revision is read first); a new document takes none
${STORE}`,
  integrations: `Usage: verdict memory integrations [--db <path>] [--json]

What a review is given besides the diff (linked issues, instruction files, review feedback), and
whether each is on here.

Options:
${STORE}`,
  preview: `Usage: verdict memory preview --repo <owner/name> --number <n> [--db <path>] [--json]

What a review of the pull request would be given, without calling a model: the matching contexts and
knowledge documents, the issues its body links, the instruction files that apply, and the clusters
whose findings would be withheld. Reads the pull request from GitHub with the App's credentials
(APP_ID, PRIVATE_KEY).

Options:
  --repo <owner/name>  the repository
  --number <n>         the pull request
${STORE}`,
};

export const MEMORY_HELP = `Usage: verdict memory <subcommand> [options]

Memory: the contexts (rules), clusters (alike findings and their feedback) and knowledge documents
the reviews are given, through the same services as the operator API's /memory routes. Every write
names the revision it read and is recorded in the audit log.

Subcommands:
  contexts             list the contexts
  context <id>         one context
  add-context          create a context
  edit-context <id>    change a context
  rm-context <id>      delete a context
  clusters             list the clusters
  add-cluster          create a cluster
  set-cluster <id>     set a cluster's action (none, suppress, keep) or label
  rm-cluster <id>      delete a cluster
  knowledge            list the knowledge documents
  show-knowledge       one knowledge document
  put-knowledge        create or replace a knowledge document
  integrations         what a review is given besides the diff
  preview              what a review of a pull request would be given

Run "verdict memory <subcommand> --help" for its options.`;
