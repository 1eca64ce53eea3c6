import { afterAll, describe, expect, test } from "bun:test";
import { client, ledgerOf, startMediaGateway, startReceiver, verifySignature, waitFor } from "./support";
import { jsonOf, type AnswerOf } from "../support/json";
import type { WebhookKey } from "../../src/accounts/model";

const gw = await startMediaGateway();
const hook = startReceiver();
afterAll(async () => {
  await gw.stop();
  hook.stop();
});

describe("kie end to end", () => {
  test("native createTask → recordInfo success → file served → signed callback → charged exactly", async () => {
    const { accountId, key } = await gw.account(1000);
    const { key: secret } = await jsonOf<AnswerOf<typeof WebhookKey>>(
      await gw.admin(`/admin/v1/accounts/${accountId}/webhook-key`, { method: "POST" }),
    );
    const c = client(gw, key);
    const created = await c.createTask("google/nano-banana", { prompt: "a fox" }, { callBackUrl: hook.url });
    expect(created.status).toBe(200);
    expect(created.json).toMatchObject({ code: 200, msg: "success" });
    const taskId = created.json.data.taskId;
    const rec = await c.waitRecord(taskId);
    expect(rec).toMatchObject({
      taskId,
      model: "google/nano-banana",
      state: "success",
      failCode: "",
      failMsg: "",
      creditsConsumed: 20,
    });
    const urls = JSON.parse(rec.resultJson).resultUrls;
    expect(urls).toHaveLength(1);
    expect(urls[0].startsWith(gw.url + "/files/")).toBe(true);
    const file = await fetch(urls[0]);
    expect(file.status).toBe(200);
    expect(file.headers.get("content-type")).toBe("image/png");
    const mine = new Uint8Array(await file.arrayBuffer());
    const kieTask = [...gw.up.control.tasks.values()].find((t) => t.provider === "kie")!;
    const upstream = new Uint8Array(
      await (await fetch(`${gw.up.urls.kie}/files/${kieTask.files![0]}.png`)).arrayBuffer(),
    );
    expect(mine).toEqual(upstream);
    const cb = await waitFor(() => hook.received.find((r) => r.body?.taskId === taskId), 5000, "callback");
    expect(verifySignature(secret, cb)).toBe(true);
    expect(cb.body).toMatchObject({ taskId, state: "success", creditsConsumed: 20 });
    const { hold, entries } = await ledgerOf(gw, taskId);
    expect(hold.status).toBe("posted");
    expect(entries.map((e: any) => e.amount)).toEqual([-20_000_000]);
    expect(await c.credits()).toMatchObject({ credits: 980, held_credits: 0 });
  });
});
