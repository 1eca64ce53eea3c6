// GET /v1/usage/summary: credits and tokens grouped by model, key or UTC day, LLM calls and media tasks together
// (what the wallet was charged for: calls' charges and finished tasks' costs; a running task is held, not charged).

import { sql, type SQL } from "drizzle-orm";
import { t } from "elysia";
import type { AppContext } from "../context";
import { ApiError } from "../http/errors";
import { microsToCredits } from "../ledger/units";
import { timeBound } from "./usage-api";

const DAY_MS = 86_400_000;
const GROUPS = {
  model: { column: sql`model`, label: (v: unknown) => String(v) },
  key: { column: sql`key_id`, label: (v: unknown) => String(v) },
  // A literal, not a parameter: Postgres must see the same expression in the select and the group by.
  day: {
    column: sql.raw(`(created_at / ${DAY_MS})`),
    label: (v: unknown) => new Date(Number(v) * DAY_MS).toISOString().slice(0, 10),
  },
} as const;

export const UsageSummaryQuery = t.Object({
  group_by: t.Optional(t.String({ description: "model, key or day (UTC); default model." })),
  from: t.Optional(t.String({ description: "Earliest time, inclusive: ISO 8601 or Unix milliseconds." })),
  to: t.Optional(t.String({ description: "Latest time, exclusive: ISO 8601 or Unix milliseconds." })),
});

const LineSchema = t.Object({
  micro_credits: t.Integer(),
  credits: t.Number(),
  llm_calls: t.Integer(),
  media_tasks: t.Integer(),
  input_tokens: t.Integer(),
  output_tokens: t.Integer(),
});
export const UsageSummary = t.Object({
  object: t.Literal("usage_summary"),
  group_by: t.String(),
  data: t.Array(
    t.Composite([
      t.Object({ group: t.String({ description: "The model id, key id or UTC date (YYYY-MM-DD)." }) }),
      LineSchema,
    ]),
  ),
  total: LineSchema,
});

interface Line {
  group: string;
  micro_credits: number;
  llm_calls: number;
  media_tasks: number;
  input_tokens: number;
  output_tokens: number;
}

export async function usageSummary(
  ctx: AppContext,
  accountId: string,
  q: { group_by?: string; from?: string; to?: string },
) {
  const by = q.group_by ?? "model";
  const group = GROUPS[by as keyof typeof GROUPS];
  if (!group || !Object.hasOwn(GROUPS, by))
    throw new ApiError(422, "invalid_request", "group_by must be model, key or day.", { param: "group_by" });
  const where: SQL[] = [sql`account_id = ${accountId}`];
  if (q.from) where.push(sql`created_at >= ${timeBound(q.from, "from")}`);
  if (q.to) where.push(sql`created_at < ${timeBound(q.to, "to")}`);
  const filter = sql.join(where, sql` and `);
  const llm =
    await ctx.db.all<any>(sql`select ${group.column} as g, sum(cost) as cost, count(*) as n, sum(input_tokens) as input, sum(output_tokens) as output
    from usage_records where ${filter} group by ${group.column}`);
  const media = await ctx.db.all<any>(sql`select ${group.column} as g, sum(cost) as cost, count(*) as n
    from tasks where ${filter} and state = ${"success"} group by ${group.column}`);
  const lines = new Map<string, Line>();
  const line = (g: unknown) => {
    const label = group.label(g);
    let l = lines.get(label);
    if (!l)
      lines.set(
        label,
        (l = { group: label, micro_credits: 0, llm_calls: 0, media_tasks: 0, input_tokens: 0, output_tokens: 0 }),
      );
    return l;
  };
  for (const r of llm) {
    const l = line(r.g);
    l.micro_credits += Number(r.cost ?? 0);
    l.llm_calls += Number(r.n);
    l.input_tokens += Number(r.input ?? 0);
    l.output_tokens += Number(r.output ?? 0);
  }
  for (const r of media) {
    const l = line(r.g);
    l.micro_credits += Number(r.cost ?? 0);
    l.media_tasks += Number(r.n);
  }
  const data = [...lines.values()].sort((a, b) =>
    by === "day" ? a.group.localeCompare(b.group) : b.micro_credits - a.micro_credits,
  );
  const total = data.reduce(
    (s, l) => ({
      micro_credits: s.micro_credits + l.micro_credits,
      llm_calls: s.llm_calls + l.llm_calls,
      media_tasks: s.media_tasks + l.media_tasks,
      input_tokens: s.input_tokens + l.input_tokens,
      output_tokens: s.output_tokens + l.output_tokens,
    }),
    { micro_credits: 0, llm_calls: 0, media_tasks: 0, input_tokens: 0, output_tokens: 0 },
  );
  const withCredits = <T extends { micro_credits: number }>(l: T) => ({
    ...l,
    credits: microsToCredits(l.micro_credits),
  });
  return { object: "usage_summary" as const, group_by: by, data: data.map(withCredits), total: withCredits(total) };
}
