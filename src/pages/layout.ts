// The one small layout every HTML page shares (dashboard, /pricing, /models/{id}, /docs): server-rendered, no
// JavaScript needed to read it, no CDN. `html` escapes interpolated values; `raw` marks trusted markup.

export class Raw {
  constructor(readonly value: string) {}
  toString() {
    return this.value;
  }
}
export const raw = (s: string) => new Raw(s);

export function escapeHtml(v: unknown): string {
  return String(v ?? "").replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!,
  );
}

/** Tagged template: values are escaped unless wrapped in raw(); arrays are joined. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Raw {
  let out = strings[0]!;
  values.forEach((v, i) => {
    const parts = Array.isArray(v) ? v : [v];
    out +=
      parts.map((p) => (p instanceof Raw ? p.value : p === false || p == null ? "" : escapeHtml(p))).join("") +
      strings[i + 1];
  });
  return new Raw(out);
}

const css = `
:root{--fg:#1b1f24;--muted:#5b6570;--line:#dde2e7;--accent:#2454d6;--bg:#fff;--soft:#f5f7f9}
*{box-sizing:border-box}body{margin:0;font:15px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header.top{display:flex;gap:1.5rem;align-items:center;padding:.75rem 1.5rem;border-bottom:1px solid var(--line)}
header.top a{color:var(--fg);text-decoration:none}header.top .brand{font-weight:700}
header.top nav{display:flex;gap:1rem;flex-wrap:wrap}main{max-width:1100px;margin:0 auto;padding:1.5rem}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.4rem .6rem;border-bottom:1px solid var(--line);vertical-align:top}
th{background:var(--soft);font-weight:600}code,pre{font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,monospace;background:var(--soft)}
pre{padding:.75rem;overflow:auto;border-radius:6px}a{color:var(--accent)}.muted{color:var(--muted)}
form.inline{display:inline}input,select,button{font:inherit;padding:.35rem .5rem}button{cursor:pointer}
.card{border:1px solid var(--line);border-radius:8px;padding:1rem;margin:1rem 0}.error{color:#b00020}.ok{color:#0a7a36}
header.top .sep{border-left:1px solid var(--line);padding-left:1rem}main{overflow-wrap:break-word}
td code,td a{overflow-wrap:anywhere}
@media (max-width:720px){header.top{padding:.6rem 1rem;gap:.25rem 1rem;flex-wrap:wrap}main{padding:1rem}
header.top .sep{border-left:0;padding-left:0}
.chart-scroll{overflow-x:auto;direction:rtl}.chart-scroll svg{direction:ltr;min-width:640px}
table{display:block;overflow-x:auto;max-width:100%}input,select{max-width:100%}}
`;

// The favicon, inline: no extra request, nothing to serve, and the same in the binary.
const FAVICON =
  "data:image/svg+xml," +
  encodeURIComponent(
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#2454d6"/><path d="M7 23h18M7 16h18M7 9h18" stroke="#fff" stroke-width="3" stroke-linecap="round"/><path d="M12 9l8 7-8 7" stroke="#9fb8ff" stroke-width="2.5" fill="none" stroke-linejoin="round"/></svg>`,
  );

export interface LayoutOptions {
  title: string;
  /** Extra markup for <head> (e.g. a page's own script). */
  head?: Raw;
  /** Show the signed-in dashboard navigation. */
  signedIn?: boolean;
}

export function layout(opts: LayoutOptions, body: Raw): string {
  const nav = opts.signedIn
    ? html`<a href="/dashboard">Wallet</a><a href="/dashboard/usage">Usage</a><a href="/dashboard/tasks">Tasks</a><a href="/dashboard/settings/api-keys">API Keys</a><a href="/dashboard/settings/webhooks">Webhooks</a><a class="sep" href="/pricing">Pricing</a><a href="/docs">Docs</a>`
    : html`<a href="/pricing">Pricing</a><a href="/docs">API reference</a><a href="/auth.md">Auth</a><a href="/dashboard">Dashboard</a>`;
  return (
    "<!doctype html>" +
    html`<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${opts.title} · Switchyard</title><link rel="icon" type="image/svg+xml" href="${raw(FAVICON)}"><style>${raw(css)}</style>${opts.head ?? ""}</head>
<body><header class="top"><a class="brand" href="/">Switchyard</a><nav>${nav}</nav></header><main>${body}</main></body></html>`
      .value
  );
}

export function htmlResponse(page: string, init: ResponseInit = {}): Response {
  return new Response(page, {
    ...init,
    headers: { "content-type": "text/html; charset=utf-8", ...(init.headers as any) },
  });
}
