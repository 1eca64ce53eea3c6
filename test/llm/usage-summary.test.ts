// GET /v1/usage/summary groups what the wallet was charged (LLM calls and media tasks) by model, key or UTC day, and
// its totals equal the ledger's own entries for the account; GET /v1/usage with Accept: text/csv gives the same
// records as parseable CSV. SQLite and Postgres.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { startFakeLlmUpstream } from "../fakes/llm-upstream";
import { client, startMediaGateway, type MediaGateway } from "../media/support";
import { databaseFor, dialects } from "../support/services";
import { providerEnv } from "./support";

/** RFC 4180, enough for the test: quoted fields with doubled quotes, commas and line breaks inside. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") row.push(field), (field = "");
    else if (c === "\r" && text[i + 1] === "\n") row.push(field), rows.push(row), (row = []), (field = ""), i++;
    else field += c;
  }
  return rows;
}

for (const d of dialects.filter((x) => x.available)) {
  describe(`usage summary and CSV (${d.name})`, () => {
    const fake = startFakeLlmUpstream();
    let gw: MediaGateway;
    let drop: () => Promise<void>;
    let accountId: string;
    let keys: string[];
    let keyIds: string[];
    beforeAll(async () => {
      const target = await databaseFor(d.name);
      drop = target.drop;
      gw = await startMediaGateway({ ...providerEnv(fake.url), DATABASE_URL: target.url });
      const first = await gw.account(1000);
      accountId = first.accountId;
      const second = await gw.ctx.accounts.createKey(accountId, { name: "second" });
      keys = [first.key, second.key];
      keyIds = [first.keyId, second.id];
      const call = (key: string, body: unknown, path = "/v1/chat/completions") =>
        fetch(gw.url + path, {
          method: "POST",
          headers: {
            authorization: `Bearer ${key}`,
            "content-type": "application/json",
            "anthropic-version": "2023-06-01",
          },
          body: JSON.stringify(body),
        });
      const chat = { model: "gpt-5.2", max_tokens: 50, messages: [{ role: "user", content: "hi" }] };
      expect((await call(keys[0]!, chat)).status).toBe(200);
      expect((await call(keys[1]!, chat)).status).toBe(200);
      expect(
        (
          await call(
            keys[1]!,
            { model: "claude-opus-4-5", max_tokens: 50, messages: [{ role: "user", content: 'hi, "you"' }] },
            "/v1/messages",
          )
        ).status,
      ).toBe(200);
      const c = client(gw, keys[0]!);
      await c.waitRecord((await c.createTask("google/nano-banana", { prompt: "a fox" })).json.data.taskId);
      gw.up.control.set({ fail: { message: "nsfw", code: "content_policy_violation" } }, { provider: "fal" });
      await c.waitRecord((await c.createTask("fal-ai/kling-image/o1", { prompt: "x" })).json.data.taskId); // fails: charged nothing
    }, 60_000);
    afterAll(async () => {
      await gw.stop();
      await fake.stop();
      await drop();
    });
    const get = async (path: string, headers: Record<string, string> = {}) =>
      fetch(gw.url + path, { headers: { authorization: `Bearer ${keys[0]}`, ...headers } });
    /** What the ledger took for usage: −Σ of the account's usage and charge entries, in µcr. */
    const ledgerSpent = async () =>
      -Number(
        (await gw.ctx.db.get<any>(
          sql`select sum(amount) as n from entries where account_id = ${accountId} and kind in (${"usage"}, ${"charge"})`,
        ))!.n,
      );

    test.each(["model", "key", "day"])(
      "group_by=%s: the lines add up to the ledger's entries, media included",
      async (by) => {
        const r = await get(`/v1/usage/summary?group_by=${by}`);
        expect(r.status).toBe(200);
        const s = (await r.json()) as any;
        const spent = await ledgerSpent();
        expect(spent).toBeGreaterThan(20_000_000);
        expect(s.total).toMatchObject({ micro_credits: spent, llm_calls: 3, media_tasks: 1 });
        expect(s.data.reduce((n: number, l: any) => n + l.micro_credits, 0)).toBe(spent);
        if (by === "model")
          expect(s.data.map((l: any) => l.group).sort()).toEqual(["claude-opus-4-5", "google/nano-banana", "gpt-5.2"]);
        if (by === "key") expect(s.data.map((l: any) => l.group).sort()).toEqual([...keyIds].sort());
        if (by === "day") expect(s.data.map((l: any) => l.group)).toEqual([new Date().toISOString().slice(0, 10)]);
      },
    );

    test("from/to bound it; a bad group_by or time is 422 naming it", async () => {
      const later = (await (await get(`/v1/usage/summary?from=${Date.now() + 60_000}`)).json()) as any;
      expect(later).toMatchObject({ data: [], total: { micro_credits: 0 } });
      for (const [q, param] of [
        ["group_by=provider", "group_by"],
        ["group_by=constructor", "group_by"],
        ["from=yesterday", "from"],
      ]) {
        const r = await get(`/v1/usage/summary?${q}`);
        expect([q, r.status, ((await r.json()) as any).error.param]).toEqual([q, 422, param]);
      }
    });

    test("Accept: text/csv gives the usage records as CSV that parses to the JSON's values", async () => {
      const json = (await (await get("/v1/usage")).json()) as any;
      const r = await get("/v1/usage", { accept: "text/csv" });
      expect(r.headers.get("content-type")).toStartWith("text/csv");
      const [header, ...rows] = parseCsv(await r.text());
      expect(header).toContain("micro_credits");
      expect(rows.length).toBe(json.data.length);
      const col = (name: string) => header!.indexOf(name);
      expect(
        rows.map((x) => [
          x[col("id")],
          x[col("model")],
          Number(x[col("micro_credits")]),
          Number(x[col("input_tokens")]),
        ]),
      ).toEqual(json.data.map((x: any) => [x.id, x.model, x.cost.micro_credits, x.usage.input_tokens]));
    });
  });
}
