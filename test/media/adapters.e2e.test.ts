// Every adapter, every media type it serves, through both front doors: created, worked by the engine in a real Bun
// Worker, result served by the gateway (bytes compared with what the upstream made), callback signature verified
// independently, and the wallet moved by exactly creditsConsumed (== the estimate, since the output matches).
import { afterAll, describe, expect, test } from "bun:test";
import { mp3Bytes, mp4Bytes, pngBytes } from "../fakes/media/index";
import { client, ledgerOf, startMediaGateway, startReceiver, verifySignature, waitFor } from "./support";
import { jsonOf, type AnswerOf } from "../support/json";
import type { WebhookKey } from "../../src/accounts/model";

const gw = await startMediaGateway();
const hook = startReceiver();
afterAll(async () => {
  await gw.stop();
  hook.stop();
});

interface Case {
  provider: string;
  model: string;
  input: Record<string, unknown>;
  alias: string;
  credits: number;
  expected: Uint8Array<ArrayBuffer>;
  type: string;
}
const cases: Case[] = [
  {
    provider: "kie",
    model: "google/nano-banana",
    input: { prompt: "a fox" },
    alias: "/v1/images/generations",
    credits: 20,
    expected: pngBytes(),
    type: "image",
  },
  {
    provider: "kie",
    model: "kling-3.0/video",
    input: { prompt: "a fox running", duration: 5 },
    alias: "/v1/videos",
    credits: 350,
    expected: mp4Bytes(5),
    type: "video",
  },
  {
    provider: "kie-suno",
    model: "suno/v5",
    input: { prompt: "a song about foxes" },
    alias: "/v1/music/generations",
    credits: 60,
    expected: mp3Bytes(30),
    type: "audio",
  },
  {
    provider: "fal",
    model: "fal-ai/kling-image/o1",
    input: { prompt: "a fox" },
    alias: "/v1/images/generations",
    credits: 28,
    expected: pngBytes(),
    type: "image",
  },
  {
    provider: "fal",
    model: "fal-ai/sora-2/text-to-video",
    input: { prompt: "a fox", duration: 4 },
    alias: "/v1/videos",
    credits: 400,
    expected: mp4Bytes(4),
    type: "video",
  },
  {
    provider: "replicate",
    model: "black-forest-labs/flux-schnell",
    input: { prompt: "a fox", num_outputs: 2 },
    alias: "/v1/images/generations",
    credits: 6,
    expected: pngBytes(),
    type: "image",
  },
  {
    provider: "openai-images",
    model: "gpt-image-1",
    input: { prompt: "a fox" },
    alias: "/v1/images/generations",
    credits: 42,
    expected: pngBytes(),
    type: "image",
  },
  {
    provider: "veo",
    model: "veo-3.1-fast-generate-preview",
    input: { prompt: "a fox", duration: 8 },
    alias: "/v1/videos",
    credits: 1200,
    expected: mp4Bytes(8),
    type: "video",
  },
];

async function checkFiles(urls: string[], expected: Uint8Array<ArrayBuffer>) {
  expect(urls.length).toBeGreaterThan(0);
  for (const u of urls) {
    expect(u.startsWith(gw.url + "/files/")).toBe(true);
    const res = await fetch(u);
    expect(res.status).toBe(200);
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(expected);
  }
}

async function checkMoney(taskId: string, credits: number) {
  const { hold, entries } = await ledgerOf(gw, taskId);
  expect(hold.status).toBe("posted");
  expect(entries.map((e: any) => e.amount)).toEqual([-credits * 1_000_000]);
}

describe.each(cases)("$provider $type ($model)", (k) => {
  test("native: createTask → recordInfo → file → signed callback → charged creditsConsumed", async () => {
    const { accountId, key } = await gw.account(5000);
    const { key: secret } = await jsonOf<AnswerOf<typeof WebhookKey>>(
      await gw.admin(`/admin/v1/accounts/${accountId}/webhook-key`, { method: "POST" }),
    );
    const c = client(gw, key);
    const created = await c.createTask(k.model, k.input, { callBackUrl: hook.url });
    expect(created.json.code).toBe(200);
    const taskId = created.json.data.taskId;
    const rec = await c.waitRecord(taskId);
    expect(rec).toMatchObject({ taskId, state: "success", creditsConsumed: k.credits, estimatedCredits: k.credits });
    await checkFiles(JSON.parse(rec.resultJson).resultUrls, k.expected);
    const cb = await waitFor(() => hook.received.find((r) => r.body?.taskId === taskId), 5000, "callback");
    expect(verifySignature(secret, cb)).toBe(true);
    expect(verifySignature("whsec_wrong", cb)).toBe(false);
    expect(cb.body).toMatchObject({ taskId, state: "success", creditsConsumed: k.credits, resultJson: rec.resultJson });
    await checkMoney(taskId, k.credits);
    expect(await c.credits()).toMatchObject({ credits: 5000 - k.credits, held_credits: 0 });
    expect(gw.up.requests.some((r) => r.provider === k.provider)).toBe(true);
  });

  test(`alias: POST ${k.alias} → GET /v1/tasks/{id} → file → callback → charged`, async () => {
    const { accountId, key } = await gw.account(5000);
    const { key: secret } = await jsonOf<AnswerOf<typeof WebhookKey>>(
      await gw.admin(`/admin/v1/accounts/${accountId}/webhook-key`, { method: "POST" }),
    );
    const c = client(gw, key);
    const created = await c.call("POST", k.alias, {
      model: k.model,
      ...k.input,
      callback_url: hook.url,
      max_credits: k.credits,
    });
    expect(created.status).toBe(200);
    expect(created.json).toMatchObject({
      object: `gateway.${k.type}.task`,
      status: "pending",
      model: k.model,
      estimated_credits: k.credits,
    });
    expect(created.json.id).toBe(created.json.task_id);
    const st = await c.waitStatus(created.json.task_id);
    expect(st).toMatchObject({ status: "succeeded", credits_consumed: k.credits, error: null });
    await checkFiles(st.result_urls, k.expected);
    const cb = await waitFor(
      () => hook.received.find((r) => r.body?.taskId === created.json.task_id),
      5000,
      "callback",
    );
    expect(verifySignature(secret, cb)).toBe(true);
    await checkMoney(created.json.task_id, k.credits);
    expect((await c.credits()).credits).toBe(5000 - k.credits);
  });
});
