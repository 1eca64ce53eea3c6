// The fake upstream's scenarios: a queue of answers, HTTP errors and mid-stream failures in each protocol's shape,
// dropped connections, and slow answers whose client aborts are noticed and counted.
import { describe, expect, test } from "bun:test";
import { fixtureBytes, fixtureText } from "../fakes/fixtures";
import { chunks, joined, useFakeLlmUpstream } from "../support/fake-http";

const { fake, post } = useFakeLlmUpstream();

describe("scenarios", () => {
  test("queue first, then the default; tool and cache variants", async () => {
    fake.setScenario("cache");
    fake.enqueue("tool");
    const a = await (await post("/v1/chat/completions", { model: "gpt-4o-2024-08-06", messages: [] })).text();
    expect(a).toBe(fixtureText("B_nonstream_tool.json"));
    const b = joined(
      await chunks(
        await post("/v1/chat/completions", {
          model: "gpt-4o-2024-08-06",
          stream: true,
          stream_options: { include_usage: true },
          messages: [],
        }),
      ),
    );
    expect(b).toEqual(Buffer.from(fixtureBytes("B_stream_cache.sse")));
    const c = joined(
      await chunks(await post("/v1/messages", { model: "m", max_tokens: 1, stream: true, messages: [] })),
    );
    expect(c).toEqual(Buffer.from(fixtureBytes("A_stream_text.sse"))); // Anthropic's cache stream (1450 written)
  });

  test("http errors in each protocol's shape; 429 carries retry-after", async () => {
    fake.enqueue(
      { kind: "error", status: 429, retryAfter: "2" },
      { kind: "error", status: 404 },
      { kind: "error", status: 500 },
      { kind: "error", status: 529 },
    );
    const r429 = await post("/v1/chat/completions", { model: "gpt-4o", messages: [] });
    expect([r429.status, r429.headers.get("retry-after"), await r429.text()]).toEqual([
      429,
      "2",
      fixtureText("B_error_429.json"),
    ]);
    const r404 = await post("/v1/messages", { model: "claude-sonnet-9", max_tokens: 1, messages: [] });
    expect([r404.status, await r404.text()]).toEqual([404, fixtureText("A_error_404.json")]);
    const r500 = await post("/v1/responses", { model: "gpt-4.1", input: "x" });
    expect(r500.status).toBe(500);
    expect(((await r500.json()) as any).error.type).toBe("server_error");
    const r529 = await post("/v1/messages", { model: "m", max_tokens: 1, messages: [] });
    expect(await r529.json()).toMatchObject({ type: "error", error: { type: "overloaded_error" } });
  });

  test("mid-stream errors are the recorded failure streams", async () => {
    fake.enqueue("stream-error", "stream-error", "stream-error", "stream-failed");
    const body = {
      model: "gpt-4o-2024-08-06",
      max_tokens: 1,
      stream: true,
      stream_options: { include_usage: true },
      messages: [],
      input: "x",
    };
    expect(joined(await chunks(await post("/v1/messages", body)))).toEqual(
      Buffer.from(fixtureBytes("A_stream_error.sse")),
    );
    expect(joined(await chunks(await post("/v1/chat/completions", body)))).toEqual(
      Buffer.from(fixtureBytes("B_stream_midstream_error.sse")),
    );
    const r = { ...body, model: "gpt-4.1-2025-04-14" };
    expect(joined(await chunks(await post("/v1/responses", r)))).toEqual(
      Buffer.from(fixtureBytes("C_stream_error.sse")),
    );
    expect(joined(await chunks(await post("/v1/responses", r)))).toEqual(
      Buffer.from(fixtureBytes("C_stream_failed.sse")),
    );
  });

  test("drop: some bytes, then the connection is cut without a proper end", async () => {
    fake.enqueue({ kind: "drop", dropAfterBytes: 500 });
    const res = await post("/v1/messages", { model: "m", max_tokens: 1, stream: true, messages: [] });
    const got: Uint8Array[] = [];
    let error: unknown;
    try {
      for await (const c of res.body as any as AsyncIterable<Uint8Array>) got.push(c);
    } catch (e) {
      error = e;
    }
    expect(error).toBeDefined();
    expect(joined(got)).toEqual(Buffer.from(fixtureBytes("A_stream_text.sse").subarray(0, 500)));
    expect(fake.aborts).toBe(0);
  });

  test("drop told: the bytes before the cut, then the connection held open until cut()", async () => {
    fake.enqueue({ kind: "drop", dropAfterBytes: 500, cutWhenTold: true });
    const res = await post("/v1/messages", { model: "m", max_tokens: 1, stream: true, messages: [] });
    const reader = res.body!.getReader();
    const got: Uint8Array[] = [];
    while (joined(got).length < 500) got.push((await reader.read()).value!);
    const next = reader.read();
    await Bun.sleep(100);
    expect(fake.requests.at(-1)!.finishedAt).toBeUndefined(); // not cut yet
    fake.cut();
    expect(
      await next.then(
        () => "more",
        () => "cut",
      ),
    ).toBe("cut");
    expect(joined(got)).toEqual(Buffer.from(fixtureBytes("A_stream_text.sse").subarray(0, 500)));
    expect(fake.aborts).toBe(0);
  });

  test("slow + client abort: the fake notices within 100 ms and counts it", async () => {
    fake.enqueue({ kind: "slow", firstByteMs: 20, chunkDelayMs: 40 });
    const ac = new AbortController();
    const t0 = performance.now();
    const res = await post(
      "/v1/responses",
      { model: "gpt-4.1-2025-04-14", stream: true, input: "x" },
      { signal: ac.signal },
    );
    const reader = res.body!.getReader();
    await reader.read();
    expect(performance.now() - t0).toBeGreaterThanOrEqual(15); // first byte waited
    const abortAt = performance.now();
    ac.abort();
    await Bun.sleep(150);
    expect(fake.aborts).toBe(1);
    expect(fake.requests[0]!.aborted).toBe(true);
    expect(fake.requests[0]!.abortedAt! - abortAt).toBeLessThan(100);
  });

  test("abort while the fake is still waiting to send headers also counts", async () => {
    fake.enqueue({ kind: "ok", headersDelayMs: 300 });
    const ac = new AbortController();
    const p = post("/v1/chat/completions", { model: "m", messages: [] }, { signal: ac.signal }).catch(() => "aborted");
    await Bun.sleep(50);
    ac.abort();
    expect(await p).toBe("aborted");
    await Bun.sleep(50);
    expect(fake.aborts).toBe(1);
  });

  test("a completed request is never counted as aborted", async () => {
    await (await post("/v1/chat/completions", { model: "m", stream: true, messages: [] })).text();
    await Bun.sleep(20);
    expect(fake.aborts).toBe(0);
    expect(fake.requests[0]!.finishedAt).toBeDefined();
  });
});
