// A DeepSeek stream on /v1/responses (translated from chat) still open at the end of a shutdown's grace period,
// cut in the middle of a chat event: the translator never reads the partial event and the client gets response.failed
// with gateway_shutting_down (before: ECONNRESET, helper-30). Charged what was sent, status shutdown.
import { afterAll, beforeAll, expect, test } from "bun:test";
import OpenAI from "openai";
import { cutStreams } from "../../src/llm/pump";
import { ledgerOf, startEnv, stopEnv, type Env } from "./support";

let e: Env;
beforeAll(async () => {
  e = await startEnv();
});
afterAll(() => stopEnv(e));

test("cut mid-event at shutdown: response.failed (gateway_shutting_down), recorded as shutdown", async () => {
  const { accountId, key } = await e.gw.account(1000);
  e.fake.enqueue({ kind: "slow", firstByteMs: 0, chunkDelayMs: 100, pieceBytes: 40 }); // pieces end mid-event
  const openai = new OpenAI({ apiKey: key, baseURL: `${e.gw.url}/v1`, maxRetries: 0 });
  const stream = await openai.responses.create({
    model: "deepseek-test",
    input: "hi",
    max_output_tokens: 100,
    stream: true,
  });
  const it = stream[Symbol.asyncIterator]();
  await it.next();
  await Bun.sleep(250);
  await cutStreams();
  const types: string[] = [];
  let last: any = null;
  for (;;) {
    const x = await it.next();
    if (x.done) break;
    types.push((x.value as any).type);
    last = x.value;
  }
  expect(types.at(-1)).toBe("response.failed");
  expect(last.response.error).toMatchObject({ code: "gateway_shutting_down" });
  const { calls } = await ledgerOf(e.gw, accountId);
  expect(calls.map((c) => c.status)).toEqual(["shutdown"]);
});
