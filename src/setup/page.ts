import type { ServerResponse } from 'node:http';
import { escapeHtml } from '../html.js';

/** A tagged template whose `${}` values are escaped; `raw()` marks HTML that is already safe. */
export type Html = { readonly html: string };
export const raw = (html: string): Html => ({ html });
export function html(strings: TemplateStringsArray, ...values: Array<string | number | Html | Html[]>): Html {
  let out = strings[0]!;
  values.forEach((value, i) => {
    const part = Array.isArray(value)
      ? value.map((v) => v.html).join('')
      : typeof value === 'object'
        ? value.html
        : escapeHtml(String(value));
    out += part + strings[i + 1]!;
  });
  return { html: out };
}

const STYLE = `
body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#f6f8fa;color:#1f2328}
main{max-width:42rem;margin:3rem auto;padding:2rem;background:#fff;border:1px solid #d0d7de;border-radius:8px}
h1{font-size:1.5rem;margin-top:0}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.875em}
pre{background:#f6f8fa;padding:.75rem;border-radius:6px;overflow:auto}
button{font:inherit;font-weight:600;color:#fff;background:#1f883d;border:1px solid #1a7f37;border-radius:6px;padding:.6rem 1.2rem;cursor:pointer}
button:hover,button:focus-visible{background:#1a7f37;outline:2px solid #0969da;outline-offset:2px}
.note{background:#fff8c5;border:1px solid #d4a72c;border-radius:6px;padding:.75rem}
.error{background:#ffebe9;border:1px solid #ff8182;border-radius:6px;padding:.75rem}
dt{font-weight:600}dd{margin:0 0 .5rem 0}
a{color:#0969da}
`;

/**
 * Sends a whole HTML page. Nothing on it comes from another host (inline CSS, no fonts or scripts); the
 * policy allows the form to post to GitHub only, and no referrer leaves (the callback URL holds a code).
 */
export function sendPage(
  res: ServerResponse,
  status: number,
  title: string,
  body: Html,
  opts: { formAction?: string } = {},
): void {
  const page = html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · Verdict</title>
        <style>
          ${raw(STYLE)}
        </style>
      </head>
      <body>
        <main>
          <h1>${title}</h1>
          ${body}
        </main>
      </body>
    </html> `.html;
  const formAction = opts.formAction ? new URL(opts.formAction).origin : "'none'";
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(page),
    'cache-control': 'no-store',
    'content-security-policy': `default-src 'none'; style-src 'unsafe-inline'; form-action ${formAction}; base-uri 'none'; frame-ancestors 'none'`,
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
  });
  res.end(page);
}
