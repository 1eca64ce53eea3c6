// With SECRETS_KEY the webhook signing key is stored sealed, and the media workers (real Bun Workers, their own
// database connections) still sign callbacks with the key the account was shown.
import { afterAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { client, startMediaGateway, startReceiver, verifySignature, waitFor } from "./support";
import { jsonOf, type AnswerOf } from "../support/json";
import type { WebhookKey } from "../../src/accounts/model";

const gw = await startMediaGateway({ SECRETS_KEY: Buffer.alloc(32, 7).toString("base64") });
const hook = startReceiver();
afterAll(async () => {
  await gw.stop();
  hook.stop();
});

test("a sealed signing key: the row shows no key, the callback verifies with the key shown once", async () => {
  const { accountId, key } = await gw.account(1000);
  const { key: secret } = await jsonOf<AnswerOf<typeof WebhookKey>>(
    await gw.admin(`/admin/v1/accounts/${accountId}/webhook-key`, { method: "POST" }),
  );
  const row = await gw.ctx.db.get<{ webhook_secret: string }>(
    sql`select webhook_secret from accounts where id = ${accountId}`,
  );
  expect(row!.webhook_secret).toStartWith("sy1.");
  expect(row!.webhook_secret).not.toContain(secret);

  const created = await client(gw, key).createTask(
    "google/nano-banana",
    { prompt: "a fox" },
    { callBackUrl: hook.url },
  );
  const taskId = created.json.data.taskId;
  const cb = await waitFor(() => hook.received.find((r) => r.body?.taskId === taskId), 10_000, "callback");
  expect(verifySignature(secret, cb)).toBe(true);
});

test("a signing key that does not open (altered in the database): the callback is not sent unsigned; the attempt says why", async () => {
  const { accountId, key } = await gw.account(1000);
  await gw.admin(`/admin/v1/accounts/${accountId}/webhook-key`, { method: "POST" });
  await gw.ctx.db.run(sql`update accounts set webhook_secret = ${"sy1.00000000.AAAA"} where id = ${accountId}`);
  const created = await client(gw, key).createTask(
    "google/nano-banana",
    { prompt: "a fox" },
    { callBackUrl: hook.url },
  );
  const taskId = created.json.data.taskId;
  const attempt = await waitFor(
    () =>
      gw.ctx.db.get<{ error: string | null; state: string }>(
        sql`select error, state from callback_deliveries where task_id = ${taskId} and state = ${"failed"}`,
      ),
    10_000,
    "a failed attempt",
  );
  expect(attempt.error).toContain("not sent: the account's webhook signing key could not be opened");
  expect(hook.received.some((r) => r.body?.taskId === taskId)).toBe(false);
});
