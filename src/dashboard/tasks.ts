import { sql } from "drizzle-orm";
import { Elysia } from "elysia";
import type { AppContext } from "../context";
import { html } from "../pages/layout";
import { credits, when } from "./format";
import { renderPage, withSession } from "./guard";
import type { Users } from "./users";

// Tasks: the account's media tasks with state, model, cost (the estimate while running), result links, and a
// preview for image results. Results live 14 days; expired ones are marked instead of linked.

const LIMIT = 100;
const IMAGE = /\.(png|jpe?g|webp|gif|avif)(\?|$)/i;
const STATES = ["waiting", "generating", "success", "fail"];

function resultUrls(resultJson: string | null): string[] {
  if (!resultJson) return [];
  try {
    const urls = JSON.parse(resultJson)?.resultUrls;
    // Only http(s) links are rendered: a javascript: URL in an upstream answer must never become a link.
    return Array.isArray(urls) ? urls.filter((u): u is string => typeof u === "string" && /^https?:\/\//i.test(u)) : [];
  } catch {
    return [];
  }
}

export function tasksRoutes(ctx: AppContext, users: Users) {
  return new Elysia({ name: "dashboard-tasks", detail: { hide: true } }).get("/dashboard/tasks", ({ request, query }) =>
    withSession(users, request, async (p) => {
      const accountId = p.session.accountId;
      const state = STATES.includes(String(query.state)) ? String(query.state) : undefined;
      const rows = await ctx.db.all<any>(sql`select id, model, state, estimate, cost, result_json, fail_code, fail_msg, created_at, completed_at, results_expired
        from tasks where account_id = ${accountId} ${state ? sql`and state = ${state}` : sql``} order by created_at desc limit ${LIMIT}`);
      return renderPage({
        title: "Tasks",
        nonce: p.nonce,
        page: p,
        body: html`<h1>Tasks</h1>
<form method="get" action="/dashboard/tasks"><label>State <select name="state"><option value="">any</option>
${STATES.map((s) => html`<option value="${s}" ${s === state ? "selected" : ""}>${s}</option>`)}</select></label> <button type="submit">Filter</button></form>
${rows.length
  ? html`<table><tr><th>Created (UTC)</th><th>Task</th><th>Model</th><th>State</th><th>Credits</th><th>Results</th></tr>
${rows.map((t) => {
    const urls = resultUrls(t.result_json);
    const final = t.state === "success" || t.state === "fail";
    return html`<tr><td>${when(t.created_at)}</td><td><code>${t.id}</code></td><td>${t.model}</td><td>${t.state}${t.fail_code ? html`<br><span class="error">${t.fail_code}: ${t.fail_msg ?? ""}</span>` : ""}</td>
<td>${final ? credits(t.cost ?? 0) : html`<span class="muted">≤ ${credits(t.estimate)} (held)</span>`}</td>
<td>${t.results_expired ? html`<span class="muted">expired</span>` : urls.map((u, i) => html`<div>${IMAGE.test(u) ? html`<a href="${u}"><img src="${u}" alt="result ${i + 1}" loading="lazy" style="max-width:120px;max-height:120px;display:block"></a>` : ""}<a href="${u}">result ${i + 1}</a></div>`)}</td></tr>`;
  })}</table>`
  : html`<p class="muted">No tasks${state ? ` in state ${state}` : ""} yet. Media tasks created with this account's keys appear here.</p>`}`,
      });
    }),
  );
}
