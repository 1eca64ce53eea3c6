import { Elysia } from "elysia";
import type { AppContext } from "../context";
import { html } from "../pages/layout";
import { stackedBarChart } from "./chart";
import { credits, DAY_MS, dayLabel, int, parseDay, when } from "./format";
import { renderPage, sessionGuard, withSession } from "./guard";
import { type UsageFilter, usageReport } from "./service";
import type { Users } from "./users";

// Usage: spend (LLM calls and media tasks) and tokens by day and by model (inline SVG charts and a table), spend by
// key, and the request log from usage_records, filtered by model, date range (UTC days, default the last 30) and
// request id.

const LOG_LIMIT = 200;
const MAX_DAYS = 366;

export function usageRoutes(ctx: AppContext, users: Users) {
  return new Elysia({ name: "dashboard-usage", detail: { hide: true } }).use(sessionGuard(ctx, users)).get(
    "/dashboard/usage",
    ({ request, query }) =>
      withSession(users, request, async (signedIn) => {
        const accountId = signedIn.session.accountId;
        await ctx.llmLedger.committedFor(accountId); // calls just answered: their records may still be queued
        const filter = usageFilter(query, Math.floor(Date.now() / DAY_MS));
        const report = await usageReport(ctx, accountId, filter, LOG_LIMIT);
        const keyNames = new Map(
          (await ctx.accounts.listKeys(accountId)).map((k) => [k.id, `${k.name} (${k.prefix}…)`]),
        );
        return renderPage({
          title: "Usage",
          nonce: signedIn.nonce,
          page: signedIn,
          body: usageBody(filter, report, keyNames),
        });
      }),
    { session: true },
  );
}

type UsageReport = Awaited<ReturnType<typeof usageReport>>;
type ModelTotals = { n: number; cost: number; input: number; output: number; cache: number };

/** The query's filters: a range of UTC days (default the last 30, at most MAX_DAYS), a model, a request id. */
function usageFilter(query: Record<string, string | undefined>, today: number): UsageFilter {
  let to = parseDay(query.to) ?? today;
  let from = parseDay(query.from) ?? to - 29;
  if (from > to) [from, to] = [to, from];
  from = Math.max(from, to - (MAX_DAYS - 1));
  const model = typeof query.model === "string" && query.model ? query.model.slice(0, 200) : undefined;
  const requestId =
    typeof query.request_id === "string" && query.request_id.trim() ? query.request_id.trim().slice(0, 200) : undefined;
  return { from, to, model, requestId };
}

function usageBody(filter: UsageFilter, report: UsageReport, keyNames: Map<string, string>) {
  const { from, to } = filter;
  const days = Array.from({ length: to - from + 1 }, (_, i) => from + i);
  const points = report.perDay.map((r) => ({ day: Number(r.day_number), model: r.model as string, row: r }));
  const mediaPoints = report.mediaPerDay.map((r) => ({
    day: Number(r.day_number),
    model: r.model as string,
    row: { ...r, input: 0, output: 0, cache_read: 0, cache_write: 0 },
  }));
  return html`<h1>Usage</h1>
${filterForm(filter, report.models)}
${stackedBarChart(
  [...points, ...mediaPoints].map(({ day, model: m, row }) => ({ day, model: m, value: Number(row.cost) })),
  days,
  { title: "Spend per day (credits, UTC; LLM calls and media tasks)", format: (v) => credits(Math.round(v)) },
)}
${stackedBarChart(
  points.map(({ day, model: m, row }) => ({ day, model: m, value: Number(row.input) + Number(row.output) })),
  days,
  { title: "Tokens per day (input + output)", format: (v) => int(Math.round(v)) },
)}
<h2>By model</h2>
${byModelTable(totalsByModel([...points, ...mediaPoints]))}
<h2>By key</h2>
${byKeyTable(report.byKey, keyNames)}
<h2>Request log <span class="muted">(latest ${LOG_LIMIT}, UTC)</span></h2>
${requestLog(report.log)}`;
}

function filterForm({ from, to, model, requestId }: UsageFilter, models: string[]) {
  return html`<form method="get" action="/dashboard/usage" class="card" id="usage-filters">
<label>Model <select name="model"><option value="">all models</option>${models.map((m) => html`<option value="${m}" ${m === model ? "selected" : ""}>${m}</option>`)}</select></label>
<label>From <input type="date" name="from" value="${dayLabel(from)}"></label>
<label>To <input type="date" name="to" value="${dayLabel(to)}"></label>
<label>Request id <input name="request_id" value="${requestId ?? ""}" placeholder="req_…" size="36"></label>
<button type="submit">Filter</button> <a href="/dashboard/usage">Reset</a></form>`;
}

function totalsByModel(points: { model: string; row: any }[]): Map<string, ModelTotals> {
  const byModel = new Map<string, ModelTotals>();
  for (const { model: m, row } of points) {
    const t = byModel.get(m) ?? { n: 0, cost: 0, input: 0, output: 0, cache: 0 };
    t.n += Number(row.n);
    t.cost += Number(row.cost);
    t.input += Number(row.input);
    t.output += Number(row.output);
    t.cache += Number(row.cache_read) + Number(row.cache_write);
    byModel.set(m, t);
  }
  return byModel;
}

function byModelTable(byModel: Map<string, ModelTotals>) {
  return byModel.size
    ? html`<table id="by-model"><tr><th>Model</th><th>Requests / tasks</th><th>Input tokens</th><th>Output tokens</th><th>Cache tokens</th><th>Credits</th></tr>
${[...byModel].sort((a, b) => b[1].cost - a[1].cost).map(([m, t]) => html`<tr><td>${m}</td><td>${int(t.n)}</td><td>${int(t.input)}</td><td>${int(t.output)}</td><td>${int(t.cache)}</td><td>${credits(t.cost)}</td></tr>`)}</table>`
    : html`<p class="muted">No requests in this range.</p>`;
}

function byKeyTable(byKey: UsageReport["byKey"], keyNames: Map<string, string>) {
  return byKey.size
    ? html`<table id="by-key"><tr><th>Key</th><th>LLM requests</th><th>Media tasks</th><th>Credits</th></tr>
${[...byKey].sort((a, b) => b[1].cost - a[1].cost).map(([k, t]) => html`<tr data-key-id="${k}"><td>${keyNames.get(k) ?? k}</td><td>${int(t.n)}</td><td>${int(t.tasks)}</td><td>${credits(t.cost)}</td></tr>`)}</table>`
    : html`<p class="muted">No spend in this range.</p>`;
}

function requestLog(log: UsageReport["log"]) {
  return log.length
    ? html`<table id="request-log"><tr><th>Time</th><th>Request id</th><th>Model</th><th>Endpoint</th><th>Status</th><th>In</th><th>Out</th><th>Cache r/w</th><th>Searches</th><th>Credits</th><th>Latency ms</th><th>TTFB ms</th></tr>
${log.map(
  (
    r,
  ) => html`<tr><td>${when(r.created_at)}</td><td><code>${r.request_id}</code></td><td>${r.model}</td><td>${r.endpoint}</td>
<td>${r.status}${r.upstream_status ? ` (${r.upstream_status})` : ""}</td><td>${int(r.input_tokens)}</td><td>${int(r.output_tokens)}</td>
<td>${int(r.cache_read_tokens)}/${int(r.cache_write_tokens)}</td><td>${int(r.web_search_calls)}</td><td>${credits(r.cost)}</td><td>${r.latency_ms ?? ""}</td><td>${r.ttfb_ms ?? ""}</td></tr>`,
)}</table>`
    : html`<p class="muted">No requests match. LLM and embeddings requests made with this account's keys appear here.</p>`;
}
