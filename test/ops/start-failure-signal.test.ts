// Media workers that cannot start end the gateway with exit 1 (server.ts). A SIGTERM while it closes its services
// (here its ledger waits for a call in flight) must not start a second, concurrent shutdown: that one closed the
// database under the first close, skipped the ledger's log of unwritten calls, and exited 0 (helper-31). A stream
// open then ends with its protocol's error event, as at the end of a shutdown's grace period.
import { afterAll, expect, test } from "bun:test";
import OpenAI from "openai";
import { startFakeLlmUpstream } from "../fakes/llm-upstream";
import { providerEnv } from "../llm/support";
import { ADMIN_TOKEN } from "../support/gateway";
import { freePort, spawnFailingMedia, untilServing } from "../support/process";

const fake = startFakeLlmUpstream({ defaultScenario: { kind: "slow", headersDelayMs: 20_000 } });
afterAll(() => fake.stop());

/** A key of a new account, made through the admin API of the gateway on `port`. */
async function keyOn(port: number): Promise<string> {
  const admin = (p: string, body: unknown) =>
    fetch(`http://127.0.0.1:${port}${p}`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    }).then((r) => r.json() as any);
  const account = await admin("/admin/v1/accounts", { name: "start-fail", credits: 100 });
  return (await admin(`/admin/v1/accounts/${account.id}/keys`, { name: "k" })).key;
}

test("a SIGTERM while the gateway closes after its media workers failed to start: still exit 1", async () => {
  const port = freePort();
  const proc = spawnFailingMedia(port, {
    ...providerEnv(fake.url),
    ADMIN_TOKEN,
    FAILING_WORKER_MS: "2500",
    SHUTDOWN_GRACE_SECONDS: "1",
  });
  let err = "";
  const errDone = (async () => {
    for await (const c of proc.stderr) err += new TextDecoder().decode(c);
  })();
  void new Response(proc.stdout).text();
  const until = Date.now() + 10_000;
  await untilServing(port);
  const openai = new OpenAI({ apiKey: await keyOn(port), baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
  const call = openai.chat.completions
    .create({ model: "gpt-5.2", max_completion_tokens: 100, messages: [{ role: "user", content: "hi" }] })
    .catch(() => null);
  await Bun.sleep(300); // the call is in flight, its upstream slow to answer
  while (!err.includes("could not start: media workers") && Date.now() < until + 10_000) await Bun.sleep(10);
  expect(err).toContain("could not start: media workers");
  await Bun.sleep(100);
  proc.kill("SIGTERM");
  expect(await proc.exited).toBe(1);
  await errDone;
  await call;
}, 40_000);

test("a stream open when the media workers fail to start gets gateway_shutting_down, and the gateway exits 1", async () => {
  const streams = startFakeLlmUpstream({
    defaultScenario: { kind: "slow", firstByteMs: 0, chunkDelayMs: 1000, eventPieces: true },
  }); // ~10 s
  try {
    const port = freePort();
    const proc = spawnFailingMedia(port, { ...providerEnv(streams.url), ADMIN_TOKEN, FAILING_WORKER_MS: "2000" });
    void new Response(proc.stdout).text();
    void new Response(proc.stderr).text();
    await untilServing(port);
    const openai = new OpenAI({ apiKey: await keyOn(port), baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
    const stream = await openai.chat.completions.create({
      model: "gpt-5.2",
      max_completion_tokens: 100,
      stream: true,
      messages: [{ role: "user", content: "hi" }],
    });
    const error = await (async () => {
      for await (const _ of stream);
      return null;
    })().catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error.code ?? error.error?.code).toBe("gateway_shutting_down");
    expect(await proc.exited).toBe(1);
  } finally {
    await streams.stop();
  }
}, 40_000);
