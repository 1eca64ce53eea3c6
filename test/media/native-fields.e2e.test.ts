// The native door's body is {model, input, callBackUrl, max_credits}. A field beside them is refused by name, as an
// unknown input field is: a misspelt budget guard (maxCredits) or callback URL (callbackUrl) was silently dropped,
// so the task ran with no budget guard or no callback, and was charged.
import { afterAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { client, startMediaGateway } from "./support";

const gw = await startMediaGateway({ MEDIA_WORKERS: "0" }, { autostart: false });
afterAll(() => gw.stop());

test.each([
  ["maxCredits", 1],
  ["callbackUrl", "https://example.com/hook"],
])(
  "a native creation with %p beside model and input is a 422 naming it; nothing is created or held",
  async (field, value) => {
    const { key, accountId } = await gw.account(1000);
    const c = client(gw, key);
    const res = await c.call("POST", "/api/v1/jobs/createTask", {
      model: "z-image",
      input: { prompt: "x" },
      [field]: value,
    });
    expect(res.status).toBe(422);
    expect(res.json).toMatchObject({ code: 422, error_code: "invalid_request", data: null });
    expect(res.json.msg).toContain(field);
    expect(await gw.ctx.db.all(sql`select id from tasks where account_id = ${accountId}`)).toEqual([]);
    expect(await c.credits()).toMatchObject({ credits: 1000, held_credits: 0 });
  },
);

test("the native door's own fields are still taken", async () => {
  const { key } = await gw.account(1000);
  const c = client(gw, key);
  const res = await c.createTask(
    "z-image",
    { prompt: "x" },
    { max_credits: 100, callBackUrl: "https://example.com/hook" },
  );
  expect(res.status).toBe(200);
  expect((await c.createTask("z-image", { prompt: "x" }, { max_credits: 1 })).json).toMatchObject({
    code: 402,
    error_code: "max_credits_exceeded",
  });
});
