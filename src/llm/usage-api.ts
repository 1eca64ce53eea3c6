// GET /v1/usage: the caller's own usage records, newest first.

import { sql, type SQL } from "drizzle-orm";
import { t } from "elysia";
import type { AppContext } from "../context";
import { ApiError } from "../http/errors";
import { MICROS_PER_USD, microsToCredits } from "../ledger/units";

export const UsageQuery = t.Object({
  request_id: t.Optional(
    t.String({ description: "Only the record of this request (the x-request-id of its answer)." }),
  ),
  model: t.Optional(t.String({ description: "Only this model id." })),
  from: t.Optional(t.String({ description: "Earliest time, inclusive: ISO 8601 or Unix milliseconds." })),
  to: t.Optional(t.String({ description: "Latest time, exclusive: ISO 8601 or Unix milliseconds." })),
  // The range is checked in listUsage: a bound here fails as a bare "property" error that names no parameter.
  limit: t.Optional(t.Numeric({ description: "At most this many records: 1 to 1000 (default 100)." })),
});

const Open = <T extends Parameters<typeof t.Object>[0]>(props: T) => t.Object(props, { additionalProperties: true });
const Count = t.Nullable(t.Integer());
export const UsageList = Open({
  object: t.Literal("list"),
  data: t.Array(
    Open({
      id: t.String(),
      request_id: t.String(),
      key_id: t.Nullable(t.String()),
      model: t.String(),
      endpoint: t.String(),
      provider: t.Nullable(t.String()),
      status: t.String(),
      upstream_status: t.Nullable(t.Integer()),
      usage: Open({
        input_tokens: Count,
        output_tokens: Count,
        cache_read_tokens: Count,
        cache_write_tokens: Count,
        cache_write_1h_tokens: Count,
        web_search_calls: Count,
      }),
      cost: Open({ micro_credits: t.Integer(), credits: t.Number(), usd: t.Number() }),
      latency_ms: t.Nullable(t.Number()),
      ttfb_ms: t.Nullable(t.Number()),
      error: t.Nullable(t.String()),
      created_at: t.String({ description: "ISO 8601 time." }),
    }),
  ),
});

export interface UsageFilter {
  request_id?: string;
  model?: string;
  from?: string;
  to?: string;
  limit?: number;
}

/** A query's time bound (ISO 8601 or Unix ms) as Unix ms, or 422 naming it. */
export function timeBound(v: string, param: string): number {
  const ms = /^\d+$/.test(v) ? Number(v) : Date.parse(v);
  if (!Number.isFinite(ms))
    throw new ApiError(422, "invalid_request", `${param} must be an ISO 8601 time or Unix milliseconds.`, { param });
  return ms;
}

export async function listUsage(ctx: AppContext, accountId: string, f: UsageFilter) {
  const where: SQL[] = [sql`account_id = ${accountId}`];
  if (f.request_id) where.push(sql`id = ${f.request_id}`); // the primary key (db/tables.ts)
  if (f.model) where.push(sql`model = ${f.model}`);
  if (f.from) where.push(sql`created_at >= ${timeBound(f.from, "from")}`);
  if (f.to) where.push(sql`created_at < ${timeBound(f.to, "to")}`);
  const limit = f.limit ?? 100;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
    throw new ApiError(422, "invalid_request", "limit must be a whole number from 1 to 1000.", { param: "limit" });
  const rows = await ctx.db.all<any>(
    sql`select * from usage_records where ${sql.join(where, sql` and `)} order by created_at desc, id desc limit ${limit}`,
  );
  return { object: "list" as const, data: rows.map(view) };
}

const CSV_COLUMNS = [
  "id",
  "created_at",
  "key_id",
  "model",
  "endpoint",
  "provider",
  "status",
  "upstream_status",
  "input_tokens",
  "output_tokens",
  "cache_read_tokens",
  "cache_write_tokens",
  "cache_write_1h_tokens",
  "web_search_calls",
  "micro_credits",
  "credits",
  "latency_ms",
  "ttfb_ms",
  "error",
] as const;

/** The same records as CSV (RFC 4180: every field quoted when it holds a comma, quote or line break). */
export function usageCsv(list: { data: ReturnType<typeof view>[] }): Response {
  const field = (v: unknown) => {
    const s = v === null || v === undefined ? "" : String(v);
    return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
  };
  const rows = list.data.map((r) => {
    const flat: Record<string, unknown> = {
      ...r,
      ...r.usage,
      micro_credits: r.cost.micro_credits,
      credits: r.cost.credits,
    };
    return CSV_COLUMNS.map((c) => field(flat[c])).join(",");
  });
  return new Response([CSV_COLUMNS.join(","), ...rows].join("\r\n") + "\r\n", {
    headers: { "content-type": "text/csv; charset=utf-8" },
  });
}

function view(r: any) {
  return {
    id: r.id,
    request_id: r.request_id,
    key_id: r.key_id,
    model: r.model,
    endpoint: r.endpoint,
    provider: r.provider,
    status: r.status,
    upstream_status: r.upstream_status,
    usage: {
      input_tokens: r.input_tokens,
      output_tokens: r.output_tokens,
      cache_read_tokens: r.cache_read_tokens,
      cache_write_tokens: r.cache_write_tokens,
      cache_write_1h_tokens: r.cache_write_1h_tokens,
      web_search_calls: r.web_search_calls,
    },
    cost: { micro_credits: r.cost, credits: microsToCredits(r.cost), usd: r.cost / MICROS_PER_USD },
    latency_ms: r.latency_ms,
    ttfb_ms: r.ttfb_ms,
    error: r.error,
    created_at: new Date(Number(r.created_at)).toISOString(),
  };
}
