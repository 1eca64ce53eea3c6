// A 200 whose body is not the protocol's answer (truncated JSON, an HTML page, another content-type, JSON where a
// stream was asked for or the reverse) is a 502 `upstream_bad_response` in the caller's protocol, nothing charged,
// logged with the upstream's status and content type. An answer too large to be read whole before forwarding has
// its first bytes checked before any is sent, and one whose end turns out unusable has its connection cut and is not
// charged. On SQLite and on Postgres; charges are read from the ledger.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { WHOLE_ANSWER_BYTES } from "../../src/llm/answer-head";
import { createLogger } from "../../src/log";
import { startFakeLlmUpstream, type FakeLlmUpstream } from "../fakes/llm-upstream";
import { fixtureText } from "../fakes/fixtures";
import { startGateway, type TestGateway } from "../support/gateway";
import { eachDatabase } from "./databases";
import { expectVoided, ledgerOf, providerEnv } from "./support";
import { errorOf, jsonOf } from "../support/json";
import type { Message } from "@anthropic-ai/sdk/resources/messages";

const messages = { model: "claude-opus-4-5", max_tokens: 100, messages: [{ role: "user", content: "Hi" }] };
const chat = { model: "gpt-5.2", max_completion_tokens: 100, messages: [{ role: "user", content: "Hi" }] };
const responses = { model: "gpt-4.1", max_output_tokens: 100, input: "Hi" };
const html = "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>";
const anthropicJson = fixtureText("A_nonstream.json").trimEnd();

eachDatabase("an unusable 200 answer", (databaseUrl) => {
  let fake: FakeLlmUpstream;
  let gw: TestGateway;
  const logged: any[] = [];
  beforeAll(async () => {
    fake = startFakeLlmUpstream();
    gw = await startGateway(
      { ...providerEnv(fake.url), DATABASE_URL: databaseUrl() },
      createLogger("warn", (l) => logged.push(JSON.parse(l))),
    );
  });
  afterAll(async () => {
    await gw.stop();
    await fake.stop();
  });

  const post = (key: string, path: string, body: object) =>
    fetch(gw.url + path, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  /** 502 upstream_bad_response in the path's protocol, released, recorded and logged as such. */
  async function expectRefused(r: Response, accountId: string, contentType: string) {
    expect(r.status).toBe(502);
    const body = await errorOf(r);
    if (body.type === "error") expect(body.error).toMatchObject({ type: "api_error", code: "upstream_bad_response" });
    else expect(body.error).toMatchObject({ code: "upstream_bad_response" });
    expect(JSON.stringify(body)).toContain("nothing was charged");
    await expectVoided(gw, accountId, 100);
    const { calls } = await ledgerOf(gw, accountId);
    expect(calls[0]!.status).toBe("upstream_bad_response");
    const line = logged.find(
      (l) => l.request_id === r.headers.get("x-request-id") && l.msg.startsWith("llm upstream answer unusable"),
    );
    expect(line).toMatchObject({ upstream_status: 200, content_type: contentType });
  }

  test("truncated JSON (Anthropic)", async () => {
    const { accountId, key } = await gw.account(100);
    fake.enqueue({ kind: "error", status: 200, body: anthropicJson.slice(0, -40) });
    await expectRefused(await post(key, "/v1/messages", messages), accountId, "application/json");
  });

  test("JSON cut just after its usage object: the usage is there but the answer is not whole", async () => {
    const { accountId, key } = await gw.account(100);
    expect(anthropicJson.endsWith("}}")).toBe(true);
    fake.enqueue({ kind: "error", status: 200, body: anthropicJson.slice(0, -1) });
    await expectRefused(await post(key, "/v1/messages", messages), accountId, "application/json");
  });

  test("an HTML page (chat completions)", async () => {
    const { accountId, key } = await gw.account(100);
    fake.enqueue({ kind: "error", status: 200, body: html, contentType: "text/html" });
    await expectRefused(await post(key, "/v1/chat/completions", chat), accountId, "text/html");
  });

  test("a valid answer under a content-type that is not JSON (Responses)", async () => {
    const { accountId, key } = await gw.account(100);
    fake.enqueue({ kind: "error", status: 200, body: fixtureText("C_nonstream.json"), contentType: "text/plain" });
    await expectRefused(await post(key, "/v1/responses", responses), accountId, "text/plain");
  });

  test("a stream asked for, a JSON answer given (chat completions)", async () => {
    const { accountId, key } = await gw.account(100);
    fake.enqueue({ kind: "error", status: 200, body: fixtureText("B_nonstream.json") });
    await expectRefused(
      await post(key, "/v1/chat/completions", { ...chat, stream: true }),
      accountId,
      "application/json",
    );
  });

  test("a JSON answer asked for, a stream given (Anthropic)", async () => {
    const { accountId, key } = await gw.account(100);
    fake.enqueue({
      kind: "error",
      status: 200,
      body: fixtureText("A_stream_text.sse"),
      contentType: "text/event-stream",
    });
    await expectRefused(await post(key, "/v1/messages", messages), accountId, "text/event-stream");
  });

  test("an HTML page labelled JSON, larger than the whole-answer limit: refused on its first bytes, before any is forwarded", async () => {
    const { accountId, key } = await gw.account(100);
    const big = html.replace("nginx", "x".repeat(WHOLE_ANSWER_BYTES * 2));
    fake.enqueue({ kind: "error", status: 200, body: big });
    await expectRefused(await post(key, "/v1/messages", messages), accountId, "application/json");
  });

  test("a JSON answer larger than the whole-answer limit that turns out truncated: its connection is cut, nothing charged", async () => {
    const { accountId, key } = await gw.account(100);
    const padded = anthropicJson.replace("{", "{" + " ".repeat(WHOLE_ANSWER_BYTES * 2));
    fake.enqueue({ kind: "error", status: 200, body: padded.slice(0, -40) });
    const r = await post(key, "/v1/messages", messages);
    expect(r.status).toBe(200); // its head was on its way before its end was seen
    expect(
      await r.text().then(
        () => "complete",
        () => "cut",
      ),
    ).toBe("cut");
    await expectVoided(gw, accountId, 100);
    const { calls } = await ledgerOf(gw, accountId);
    expect(calls[0]!.status).toBe("upstream_bad_response");
    const line = logged.find(
      (l) => l.request_id === r.headers.get("x-request-id") && l.msg.startsWith("llm upstream answer unusable"),
    );
    expect(line).toMatchObject({ upstream_status: 200, content_type: "application/json" });
  });

  test("the same large answer whole is forwarded and charged as usual", async () => {
    const { accountId, key } = await gw.account(100);
    fake.enqueue({
      kind: "error",
      status: 200,
      body: anthropicJson.replace("{", "{" + " ".repeat(WHOLE_ANSWER_BYTES * 2)),
    });
    const r = await post(key, "/v1/messages", messages);
    expect((await jsonOf<Message>(r)).usage.output_tokens).toBe(74);
    const { calls } = await ledgerOf(gw, accountId);
    expect(calls[0]!.status).toBe("ok");
    expect(calls[0]!.cost).toBeGreaterThan(0);
  });
});
