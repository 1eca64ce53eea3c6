// A JSON body nested deeper than MAX_JSON_DEPTH is refused with a 400 in the route's error shape by the parse hook,
// before schema validation: Elysia's validation error pretty-prints the whole value, whose indentation grows with
// the depth, so 40 KB of nested arrays on the public estimate endpoint held the event loop for seconds (and 50,000
// levels overflowed the stack: a 500). A validation error's message never carries an unbounded copy of the input.
// The LLM routes read their bodies themselves and must neither stall nor 500 on such a body.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { MAX_JSON_DEPTH } from "../../src/http/body-parsers";
import { startFakeLlmUpstream } from "../fakes/llm-upstream";
import { providerEnv } from "../llm/support";
import { dashboardUser } from "../support/dashboard";
import { ADMIN_TOKEN, startGateway, type TestGateway } from "../support/gateway";
import { errorOf, jsonOf, type AnswerOf } from "../support/json";
import type { CreditsResponse } from "../../src/ledger/routes";

const fake = startFakeLlmUpstream();
let gw: TestGateway;
let key: string;
let accountId: string;
beforeAll(async () => {
  gw = await startGateway(providerEnv(fake.url));
  ({ key, accountId } = await gw.account(100));
});
afterAll(async () => {
  await gw.stop();
  await fake.stop();
});

/** `levels` nested arrays around `inner`, as text (JSON.stringify of such a value would overflow the test's stack). */
const nested = (levels: number, inner = "0") => "[".repeat(levels) + inner + "]".repeat(levels);
/** The body: 40 KB, 20,000 levels. */
const DEEP = nested(20_000);

const post = (path: string, body: string, headers: Record<string, string> = {}) =>
  fetch(gw.url + path, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
const withKey = () => ({ authorization: `Bearer ${key}` });
const asAdmin = { authorization: `Bearer ${ADMIN_TOKEN}` };

const depthMessage = `The request body is nested more than ${MAX_JSON_DEPTH} levels deep.`;

test("every route that parses JSON refuses a deep body with a 400 in its own shape", async () => {
  // Each body would also fail its schema (no model, no name): the depth refusal, not a 422, shows that schema
  // validation never saw it. As a field of an otherwise valid body, and as the whole body.
  for (const body of [DEEP, `{"model":${DEEP}}`, nested(500_000)]) {
    const estimate = await post("/v1/credits/estimate", body);
    expect(estimate.status).toBe(400);
    expect((await errorOf(estimate)).error).toMatchObject({ code: "invalid_request", message: depthMessage });

    const task = await post("/api/v1/jobs/createTask", body, withKey());
    expect(task.status).toBe(400);
    expect(await task.json()).toMatchObject({
      code: 400,
      msg: depthMessage,
      data: null,
      error_code: "invalid_request",
    });

    const alias = await post("/v1/images/generations", body, withKey());
    expect(alias.status).toBe(400);
    expect((await errorOf(alias)).error.message).toBe(depthMessage);

    const account = await post("/admin/v1/accounts", body, asAdmin);
    expect(account.status).toBe(400);
    expect((await errorOf(account)).error.message).toBe(depthMessage);

    const user = await post(`/admin/v1/accounts/${accountId}/users`, body, asAdmin);
    expect(user.status).toBe(400);

    const signIn = await post("/dashboard/login", body, { origin: gw.url });
    expect(signIn.status).toBe(400);
    expect(signIn.headers.get("content-type")).toContain("text/html");
    expect(await signIn.text()).toContain(depthMessage);
  }
  expect(await gw.ctx.db.all(sql`select id from tasks where account_id = ${accountId}`)).toEqual([]);
});

test("a body nested exactly MAX_JSON_DEPTH deep is read as usual; one level more is refused", async () => {
  // The upstreams' notice endpoint takes any JSON body.
  const atLimit = await post("/v1/media/upstream-events/kie", `{"data":${nested(MAX_JSON_DEPTH - 1)}}`);
  expect(atLimit.status).toBe(200);
  const overLimit = await post("/v1/media/upstream-events/kie", `{"data":${nested(MAX_JSON_DEPTH)}}`);
  expect(overLimit.status).toBe(400);
  expect((await errorOf(overLimit)).error.message).toBe(depthMessage);
});

test("the event loop stays free: a second request answers while deep bodies are refused", async () => {
  // Refused in the parse hook, before validation (the test above): nothing builds a message from the value. Ten
  // deep bodies and a balance read go in together; all are answered, the balance read with its balance.
  const deep = Array.from({ length: 10 }, () => post("/v1/credits/estimate", DEEP));
  const second = fetch(gw.url + "/v1/credits", { headers: withKey() });
  const [balance, ...refused] = await Promise.all([second, ...deep]);
  expect(balance.status).toBe(200);
  expect((await jsonOf<AnswerOf<typeof CreditsResponse>>(balance)).credits).toBe(100);
  for (const r of refused) expect(r.status).toBe(400);
});

test("a validation error's message stays short, whatever the value", async () => {
  // Elysia's summary for a value of the wrong type quotes the value: here 550 KB of it went back to the caller.
  const strings = JSON.stringify({ model: Array.from({ length: 50_000 }, () => "abcdefghij") });
  const r = await post("/v1/credits/estimate", strings);
  expect(r.status).toBe(422);
  const { error } = await errorOf(r);
  expect(error).toMatchObject({ code: "invalid_request", param: "model", message: "model: Expected string" });

  const task = await post(
    "/api/v1/jobs/createTask",
    JSON.stringify({ model: "google/nano-banana", callBackUrl: { x: "y".repeat(100_000) } }),
    withKey(),
  );
  expect(task.status).toBe(422);
  expect(await task.json()).toMatchObject({ msg: "callBackUrl: Expected string", error_code: "invalid_request" });
});

test("no error answer carries an unbounded copy of the input: a message or param quoting it is cut short", async () => {
  const long = "q".repeat(300_000);
  const answers = [
    await post("/v1/credits/estimate", JSON.stringify({ model: long })), // "Unknown media model "<long>""
    await post("/v1/credits/estimate", JSON.stringify({ model: "google/nano-banana", [long]: 1 })), // an unknown field named <long>
    await post("/api/v1/jobs/createTask", JSON.stringify({ model: long }), withKey()), // the envelope
  ];
  for (const r of answers) {
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect((await r.text()).length).toBeLessThan(5_000);
  }
});

test("the LLM routes (bodies read by their own handler) answer a deep body without a 500", async () => {
  const llmCalls: Array<[string, string, Record<string, string>]> = [
    [
      "/v1/messages",
      `{"model":"claude-sonnet-4-5","max_tokens":5,"messages":[{"role":"user","content":${DEEP}}]}`,
      { "x-api-key": key, "anthropic-version": "2023-06-01" },
    ],
    ["/v1/chat/completions", `{"model":"gpt-5.2","max_credits":1,"messages":${DEEP}}`, withKey()],
    ["/v1/responses", `{"model":"deepseek-test","input":${DEEP}}`, withKey()], // translated to Chat for DeepSeek (test catalog entry)
    ["/v1/chat/completions", nested(90_000), withKey()],
  ];
  for (const [path, body, headers] of llmCalls) {
    const r = await post(path, body, headers);
    expect(r.status).toBeLessThan(500);
    await r.arrayBuffer();
  }
  const user = await dashboardUser(gw); // the gateway still answers and works
  expect(user.accountId).toBeString();
});
