// An answer whose upstream connection breaks mid-event is cut for the client too (a truncated answer must never look
// complete). What the operator sees of it: one JSON log line with the request id, not Bun's raw multi-line dump of
// an error thrown into the response body (which had no request id, and broke the "logs are JSON lines" promise).
import { afterAll, expect, test } from "bun:test";
import { startFakeLlmUpstream } from "../fakes/llm-upstream";
import { providerEnv } from "./support";
import { ADMIN_TOKEN } from "../support/gateway";
import { accountOn, spawnGateway } from "../support/process";
import { tempSqlitePath } from "../support/services";

const fake = startFakeLlmUpstream();
afterAll(() => fake.stop());

test("an upstream dropped mid-event: the client's connection is cut, the log has one JSON line with the request id, stderr stays empty", async () => {
  const gw = await spawnGateway({ ...providerEnv(fake.url), DATABASE_URL: tempSqlitePath(), ADMIN_TOKEN });
  const call = await callerOf(gw.url);
  fake.enqueue({ kind: "drop", dropAfterBytes: 450 }); // inside the stream's second event
  // Cut after its 200 went out, or (when the drop is read before Bun has written the head) before it: cut either way.
  const streamed = await call("/v1/messages", {
    model: "claude-opus-4-5",
    max_tokens: 100,
    stream: true,
    messages: [{ role: "user", content: "hi" }],
  }).then(
    async (r) => ({
      status: r.status,
      id: r.headers.get("x-request-id"),
      how: await r.text().then(
        () => "complete",
        () => "cut",
      ),
    }),
    () => ({ status: 200, id: null, how: "cut" }),
  );
  expect(streamed).toMatchObject({ status: 200, how: "cut" });
  // Answered whole (JSON) and dropped before its end: nothing had reached the client, which gets a clean 502.
  fake.enqueue({ kind: "drop", dropAfterBytes: 40 });
  const whole = await call("/v1/chat/completions", {
    model: "gpt-5.2",
    max_completion_tokens: 100,
    messages: [{ role: "user", content: "hi" }],
  });
  expect(whole.status).toBe(502);
  const wholeId = whole.headers.get("x-request-id")!;

  await Bun.sleep(100);
  await gw.stop();
  expect(await new Response(gw.proc.stderr).text()).toBe("");
  const ended = jsonLines(gw.stdout()).filter((l) => l.msg === "llm upstream answer ended early; released");
  expect(ended.filter((l) => l.request_id === wholeId)).toHaveLength(1);
  const streamedLines = ended.filter((l) => l.request_id !== wholeId);
  expect(streamedLines).toHaveLength(1);
  if (streamed.id) expect(streamedLines[0].request_id).toBe(streamed.id);
}, 30_000);

/** A POST of a JSON body to the gateway at `url` with a new account's key. */
async function callerOf(url: string) {
  const { key } = await accountOn(url, "cut", 100);
  return (path: string, body: unknown) =>
    fetch(url + path, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
}

/** The log's JSON lines, parsed (anything else written to stdout left out). */
const jsonLines = (stdout: string): any[] =>
  stdout
    .trim()
    .split("\n")
    .filter((l) => l.startsWith('{"'))
    .map((l) => JSON.parse(l));
