import { Elysia } from "elysia";
import type { AppContext } from "../context";
import { servableType } from "../media/storage";
import type { StoredResult } from "../media/views";
import { html, type Raw } from "../pages/layout";
import { credits, when } from "./format";
import { renderPage, sessionGuard, withSession } from "./guard";
import { recentTasks, resultFileTypes, type TaskLine } from "./service";
import type { Users } from "./users";

// Tasks: the account's media tasks with state, model, cost (the estimate while running), and each finished task's
// result files, a link and a preview by the file's media type. The engine stores a task's results as paths on the
// gateway (`{paths: ["/files/<token>/<name>"]}`, media/task-outcome.ts) and each file's type in result_files under its
// token; the links stay relative, so they point at this origin whatever PUBLIC_BASE_URL says. Expired results are
// marked instead of linked.

const LIMIT = 100;
const STATES = ["waiting", "generating", "success", "fail"];

/** A preview per media type (the part of the file's content type before the slash); other files get a link only. */
const PREVIEWS: Record<string, (src: string, label: string) => Raw> = {
  image: (src, label) =>
    html`<img src="${src}" alt="${label}" loading="lazy" style="max-width:120px;max-height:120px;display:block">`,
  video: (src) => html`<video src="${src}" controls preload="metadata" style="max-width:200px;display:block"></video>`,
  audio: (src) => html`<audio src="${src}" controls preload="none" style="max-width:200px;display:block"></audio>`,
};

/** The paths of a finished task's result files, as the engine stored them. */
function resultPaths(t: TaskLine): string[] {
  if (t.state !== "success" || !t.result_json || t.results_expired) return [];
  try {
    const paths = (JSON.parse(t.result_json) as StoredResult).paths;
    return Array.isArray(paths) ? paths.filter((p) => typeof p === "string" && p.startsWith("/files/")) : [];
  } catch {
    return [];
  }
}

function results(paths: string[], types: Map<string, string>): Raw[] {
  return paths.map((path, i) => {
    const label = `result ${i + 1}`;
    const preview = PREVIEWS[servableType(types.get(path.split("/")[2]!)).split("/")[0]!];
    return html`<div>${preview ? preview(path, label) : ""}<a href="${path}">${label}</a></div>`;
  });
}

export function tasksRoutes(ctx: AppContext, users: Users) {
  return new Elysia({ name: "dashboard-tasks", detail: { hide: true } }).use(sessionGuard(ctx, users)).get(
    "/dashboard/tasks",
    ({ request, query }) =>
      withSession(users, request, async (signedIn) => {
        const accountId = signedIn.session.accountId;
        const state = STATES.includes(String(query.state)) ? String(query.state) : undefined;
        const rows = await recentTasks(ctx, accountId, state, LIMIT);
        const paths = new Map(rows.map((t) => [t.id, resultPaths(t)]));
        const types = await resultFileTypes(
          ctx,
          rows.filter((t) => paths.get(t.id)!.length).map((t) => t.id),
        );
        return renderPage({
          title: "Tasks",
          nonce: signedIn.nonce,
          page: signedIn,
          body: html`<h1>Tasks</h1>
<form method="get" action="/dashboard/tasks"><label>State <select name="state"><option value="">any</option>
${STATES.map((s) => html`<option value="${s}" ${s === state ? "selected" : ""}>${s}</option>`)}</select></label> <button type="submit">Filter</button></form>
${
  rows.length
    ? html`<table><tr><th>Created (UTC)</th><th>Task</th><th>Model</th><th>State</th><th>Credits</th><th>Results</th></tr>
${rows.map((t) => {
  const final = t.state === "success" || t.state === "fail";
  return html`<tr><td>${when(t.created_at)}</td><td><code>${t.id}</code></td><td>${t.model}</td><td>${t.state}${t.fail_code ? html`<br><span class="error">${t.fail_code}: ${t.fail_msg ?? ""}</span>` : ""}</td>
<td>${final ? credits(t.cost ?? 0) : html`<span class="muted">≤ ${credits(t.estimate)} (held)</span>`}</td>
<td>${t.results_expired ? html`<span class="muted">expired</span>` : results(paths.get(t.id)!, types)}</td></tr>`;
})}</table>`
    : html`<p class="muted">No tasks${state ? ` in state ${state}` : ""} yet. Media tasks created with this account's keys appear here.</p>`
}`,
        });
      }),
    { session: true },
  );
}
