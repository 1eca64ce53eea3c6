// The dashboard's Usage page counts media tasks as spend (a wallet that spent 20 credits on an image and a little
// on LLM calls shows a chart reaching 20, not the LLM part only) and breaks spend down per key. The spend comes from real calls and a real task, and is checked against the ledger.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { Users } from "../../src/dashboard/users";
import { startFakeLlmUpstream } from "../fakes/llm-upstream";
import { providerEnv } from "../llm/support";
import { client, startMediaGateway, type MediaGateway } from "../media/support";
import { PASSWORD, signIn } from "../support/dashboard";

const fake = startFakeLlmUpstream();
let gw: MediaGateway;
let cookie: string;
let accountId: string;
let keyIds: string[];
beforeAll(async () => {
  gw = await startMediaGateway(providerEnv(fake.url));
  const first = await gw.account(1000);
  accountId = first.accountId;
  const second = await gw.ctx.accounts.createKey(accountId, { name: "agent" });
  keyIds = [first.keyId, second.id];
  const email = `spend-${crypto.randomUUID().slice(0, 8)}@example.com`;
  await new Users(gw.ctx.db).create(accountId, email, PASSWORD);
  cookie = (await signIn(gw, email)).cookie;
  const chat = { model: "gpt-5.2", max_tokens: 50, messages: [{ role: "user", content: "hi" }] };
  const r = await fetch(gw.url + "/v1/chat/completions", {
    method: "POST",
    headers: { authorization: `Bearer ${second.key}`, "content-type": "application/json" },
    body: JSON.stringify(chat),
  });
  expect(r.status).toBe(200);
  const c = client(gw, first.key);
  await c.waitRecord((await c.createTask("google/nano-banana", { prompt: "a fox" })).json.data.taskId);
}, 60_000);
afterAll(async () => {
  await gw.stop();
  await fake.stop();
});

const page = async () => (await fetch(gw.url + "/dashboard/usage", { headers: { cookie } })).text();
const credits = (micros: number) => String(Number((micros / 1e6).toFixed(6)));

describe("Usage page spend", () => {
  test("media tasks are spend: by model, by key, and in the chart, adding up to the ledger", async () => {
    await gw.ctx.llmLedger.committedFor(accountId, 10_000); // a reader's 250 ms can be short of a busy commit
    const html = await page();
    const task = Number((await gw.ctx.db.get<any>(sql`select cost from tasks where account_id = ${accountId}`))!.cost);
    const call = Number(
      (await gw.ctx.db.get<any>(sql`select cost from usage_records where account_id = ${accountId}`))!.cost,
    );
    const ledger = -Number(
      (await gw.ctx.db.get<any>(
        sql`select sum(amount) as n from entries where account_id = ${accountId} and kind in (${"usage"}, ${"charge"})`,
      ))!.n,
    );
    expect(task + call).toBe(ledger);
    expect(html).toMatch(
      new RegExp(`<td>google/nano-banana</td><td>1</td><td>0</td><td>0</td><td>0</td><td>${credits(task)}</td>`),
    );
    expect(html).toContain(`google/nano-banana: ${credits(task)}</title>`); // the chart's segment
    const byKey = html.slice(html.indexOf('id="by-key"'));
    expect(byKey).toMatch(
      new RegExp(
        `data-key-id="${keyIds[0]}"><td>test \\(sk-sy-[^)]+…\\)</td><td>0</td><td>1</td><td>${credits(task)}</td>`,
      ),
    );
    expect(byKey).toMatch(
      new RegExp(
        `data-key-id="${keyIds[1]}"><td>agent \\(sk-sy-[^)]+…\\)</td><td>1</td><td>0</td><td>${credits(call)}</td>`,
      ),
    );
  });

  test("the spend axis reaches at least the day's total, media included, at a round number", async () => {
    const html = await page();
    const svg = html.slice(html.indexOf("<svg"), html.indexOf("</svg>"));
    const labels = [...svg.matchAll(/<text class="axis"[^>]*>([^<]+)<\/text>/g)].map((m) => Number(m[1]));
    const top = Math.max(...labels);
    const mantissa = top / 10 ** Math.floor(Math.log10(top));
    expect([1, 2, 5]).toContain(Math.round(mantissa * 1e9) / 1e9);
    const total = (await gw.ctx.ledger.balance(accountId))!;
    expect(top).toBeGreaterThanOrEqual((1000e6 - total.balance) / 1e6); // above the 20-credit image, not only the LLM call
  });
});
