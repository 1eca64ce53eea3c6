// What goes wrong on a translated stream, each in the client's protocol and each released or charged as on the native
// path, on SQLite and on Postgres: mid-stream upstream errors, drops, a stream ended early, a client that leaves, and
// (issue 20, point 1) a stream the translation tells the client failed: recorded as failed and charged only the usage
// the upstream stated, never as ok.
import { expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { expectCharged, ledgerOf } from "../support";
import { eachDatabase } from "../databases";
import { chargeOf } from "./clients";
import { fixture, hi, model, rejection, useFailingEnv } from "./failing-calls";

eachDatabase("translated calls that fail", (databaseUrl) => {
  const { e, anthropic, openai, expectVoidedAs } = useFailingEnv(databaseUrl);

  test("an upstream error event mid-stream becomes each client protocol's own error; released", async () => {
    let { accountId, key } = await e.gw.account(100);
    e.fake.enqueue("stream-error"); // chat's {"error": ...} chunk
    const a: any = await rejection(
      anthropic(key).messages.stream({ model: "gemini-2.5-flash", max_tokens: 100, messages: hi }).finalMessage(),
    );
    expect(a).toBeInstanceOf(Anthropic.APIError);
    await expectVoidedAs(accountId, "failed");

    ({ accountId, key } = await e.gw.account(100));
    e.fake.enqueue("stream-error"); // Anthropic's event: error (overloaded)
    const r = await openai(key)
      .responses.stream({ model: "claude-haiku-4-5", input: "Hi", max_output_tokens: 100 })
      .finalResponse();
    expect(r.status).toBe("failed");
    await expectVoidedAs(accountId, "failed");

    ({ accountId, key } = await e.gw.account(100));
    e.fake.enqueue("stream-error"); // Responses' error event
    const c: any = await rejection(
      openai(key)
        .chat.completions.stream({ model: "gpt-4.1", max_completion_tokens: 100, messages: hi })
        .finalChatCompletion(),
    );
    expect(c).toBeInstanceOf(OpenAI.APIError);
    await expectVoidedAs(accountId, "failed");
  });

  test("an upstream that drops, between events or mid-event, or ends early: the client's error event; released", async () => {
    for (const drop of [
      { kind: "drop", dropAfterEvents: 3 },
      { kind: "drop", dropAfterBytes: 700 },
      { kind: "ok", endAfterEvents: 3 },
    ] as const) {
      const { accountId, key } = await e.gw.account(100);
      e.fake.enqueue(drop);
      const err: any = await rejection(
        anthropic(key).messages.stream({ model: "gpt-4.1", max_tokens: 100, messages: hi }).finalMessage(),
      );
      expect(err).toBeInstanceOf(Anthropic.APIError);
      expect(err.message).toContain("nothing was charged");
      await expectVoidedAs(accountId, "dropped");

      const second = await e.gw.account(100);
      e.fake.enqueue(drop);
      const c: any = await rejection(
        openai(second.key)
          .chat.completions.stream({ model: "claude-haiku-4-5", max_completion_tokens: 100, messages: hi })
          .finalChatCompletion(),
      );
      expect(c).toBeInstanceOf(OpenAI.APIError);
      await expectVoidedAs(second.accountId, "dropped");
    }
  });

  test("a translated stream is not buffered: its first events reach the client while the upstream is still sending", async () => {
    const { accountId, key } = await e.gw.account(100);
    e.fake.enqueue({ kind: "slow", firstByteMs: 0, chunkDelayMs: 60, eventPieces: true }); // one event per write
    const stream = await openai(key).chat.completions.create({
      model: "claude-haiku-4-5",
      max_completion_tokens: 100,
      messages: hi,
      stream: true,
    });
    let text = "";
    let upstreamDoneAtFirstText: boolean | null = null;
    for await (const chunk of stream) {
      const t = chunk.choices[0]?.delta?.content ?? "";
      if (t && upstreamDoneAtFirstText === null)
        upstreamDoneAtFirstText = e.fake.requests.at(-1)!.finishedAt !== undefined;
      text += t;
    }
    expect(upstreamDoneAtFirstText).toBe(false);
    expect(text.length).toBeGreaterThan(0);
    expect((await ledgerOf(e.gw, accountId)).calls[0]!.status).toBe("ok");
  });

  test("a client that leaves mid-stream: the upstream is aborted, the call charged as on the native path (at most the hold)", async () => {
    const { accountId, key } = await e.gw.account(100);
    e.fake.enqueue({ kind: "slow", firstByteMs: 0, chunkDelayMs: 200 });
    const ac = new AbortController();
    const stream = await openai(key).chat.completions.create(
      { model: "claude-haiku-4-5", max_completion_tokens: 100, messages: hi, stream: true },
      { signal: ac.signal },
    );
    const it = stream[Symbol.asyncIterator]();
    await it.next();
    ac.abort();
    await rejection(it.next());
    const up = e.fake.requests.at(-1)!;
    for (let i = 0; i < 200 && !up.aborted; i++) await Bun.sleep(5);
    expect(up.aborted).toBe(true);
    const { calls } = await ledgerOf(e.gw, accountId);
    expect(calls[0]!.status).toBe("client_abort");
    expect(calls[0]!.cost).toBeGreaterThan(0);
    expect(calls[0]!.cost).toBeLessThanOrEqual(calls[0]!.held);
  });

  // Issue 20, point 1. The whole stream reaches the gateway in one write, so what it has read when the translation
  // fails is the same every run.
  const events = fixture("B_stream.sse").split(/(?<=\n\n)/);
  const unreadable = (evs: string[]) => [...evs.slice(0, 2), "data: {this is not json\n\n", ...evs.slice(2)].join("");

  test("issue 20.1: a translated stream with an unreadable event ends in response.failed, recorded failed, charged only the stated usage", async () => {
    const { accountId, key } = await e.gw.account(100);
    e.fake.enqueue({
      kind: "error",
      status: 200,
      contentType: "text/event-stream",
      whole: true,
      body: unreadable(events),
    });
    const r = await openai(key)
      .responses.stream({ model: "deepseek-test", input: "Hi", max_output_tokens: 100 })
      .finalResponse();
    expect(r.status).toBe("failed");
    expect(r.error?.message).toContain("not JSON");
    // B_stream.sse states prompt 19 (none cached), completion 7: the chat formula at deepseek-test's prices
    const line = await expectCharged(
      e.gw,
      accountId,
      100,
      chargeOf(model("deepseek-test"), { input: 19, cacheRead: 0, cacheWrite: 0, output: 7 }),
    );
    expect(line.status).toBe("failed");
  });

  test("issue 20.1: the same with no usage stated: released, recorded failed (before: charged an estimate as ok)", async () => {
    const { accountId, key } = await e.gw.account(100);
    const noUsage = events.filter((ev) => !ev.includes('"choices":[],"usage":{'));
    e.fake.enqueue({
      kind: "error",
      status: 200,
      contentType: "text/event-stream",
      whole: true,
      body: unreadable(noUsage),
    });
    const r = await openai(key)
      .responses.stream({ model: "deepseek-test", input: "Hi", max_output_tokens: 100 })
      .finalResponse();
    expect(r.status).toBe("failed");
    await expectVoidedAs(accountId, "failed");
  });
});
