// LLM streams still open when the shutdown grace period ends (a deploy): each ends with its protocol's in-stream
// error event, code gateway_shutting_down, which the official SDKs raise as an API error, instead of a connection
// closed without a word (an SDK then reports a network error, or a truncated answer that looks complete). The call
// is charged what the client received, like a client that left, and recorded with status `shutdown`.
import { afterAll, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { sql } from "drizzle-orm";
import { openDatabase } from "../../src/db/client";
import { Ledger } from "../../src/ledger/service";
import { startFakeLlmUpstream } from "../fakes/llm-upstream";
import { providerEnv } from "../llm/support";
import { ADMIN_TOKEN } from "../support/gateway";
import { accountOn, spawnGateway } from "../support/process";
import { tempSqlitePath } from "../support/services";

const fake = startFakeLlmUpstream({
  defaultScenario: { kind: "slow", firstByteMs: 0, chunkDelayMs: 400, eventPieces: true },
});
afterAll(() => fake.stop());

test("streams open at the end of the grace period get the protocol's error event; charged what was sent, status shutdown", async () => {
  const path = tempSqlitePath();
  const gw = await spawnGateway({
    ...providerEnv(fake.url),
    DATABASE_URL: path,
    ADMIN_TOKEN,
    SHUTDOWN_GRACE_SECONDS: "1",
  });
  const { accountId, key } = await accountOn(gw.url, "deploy", 100);

  const openai = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  const chat = await openai.chat.completions.create({
    model: "gpt-5.2",
    max_completion_tokens: 100,
    stream: true,
    messages: [{ role: "user", content: "hi" }],
  });
  const anthropic = new Anthropic({ apiKey: key, baseURL: gw.url, maxRetries: 0 });
  const messages = await anthropic.messages.create({
    model: "claude-opus-4-5",
    max_tokens: 100,
    stream: true,
    messages: [{ role: "user", content: "hi" }],
  });
  const chatIt = chat[Symbol.asyncIterator]();
  const messagesIt = messages[Symbol.asyncIterator]();
  await chatIt.next(); // both streams are under way
  await messagesIt.next();

  gw.proc.kill("SIGTERM");
  const [chatError, messagesError] = await Promise.all([
    drain(chatIt).catch((e) => e),
    drain(messagesIt).catch((e) => e),
  ]);
  expect(chatError).toBeInstanceOf(OpenAI.APIError);
  expect(chatError.message).toContain("restarting");
  expect(chatError.code ?? chatError.error?.code).toBe("gateway_shutting_down");
  expect(messagesError).toBeInstanceOf(Anthropic.APIError);
  expect(messagesError.message).toContain("overloaded_error");
  expect(await gw.proc.exited).toBe(0);

  const db = await openDatabase(path);
  try {
    const records = await db.all<{ status: string; cost: number; error: string | null }>(
      sql`select status, cost, error from usage_records where account_id = ${accountId}`,
    );
    expect(records.map((r) => r.status)).toEqual(["shutdown", "shutdown"]);
    for (const r of records) expect(Number(r.cost)).toBeGreaterThan(0); // the input and the output sent
    expect(await new Ledger(db).check(accountId)).toEqual([]);
    expect(await db.all(sql`select id from holds where account_id = ${accountId} and status = 'pending'`)).toEqual([]);
  } finally {
    await db.close();
  }
}, 30_000);

/** Reads a stream to its end: null, or the error it ends in. */
async function drain(it: AsyncIterator<unknown>) {
  for (;;) if ((await it.next()).done) return null;
}
