// An input URL (a source image or video) is fetched by the upstream on the operator's account. One naming a
// loopback, private, link-local or metadata address literally (or localhost) is refused at creation, a 422 naming the
// field, nothing held, unless INPUT_URLS_ALLOW_PRIVATE allows it (upstreams on a trusted network).
import { afterAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { client, startMediaGateway } from "./support";

const gw = await startMediaGateway({ MEDIA_WORKERS: "0" }, { autostart: false });
const open = await startMediaGateway({ MEDIA_WORKERS: "0", INPUT_URLS_ALLOW_PRIVATE: "true" }, { autostart: false });
afterAll(async () => {
  await gw.stop();
  await open.stop();
});

const EDIT = "google/nano-banana-edit";

test.each([
  "http://127.0.0.1/a.png",
  "http://169.254.169.254/latest/meta-data/",
  "http://10.1.2.3/a.png",
  "http://[::ffff:192.168.0.1]/a.png",
  "http://2130706433/a.png", // 127.0.0.1 written as one number
  "http://localhost:8080/a.png",
  "http://LOCALHOST./a.png",
  "http://files.localhost/a.png",
])("an input URL %p is a 422 naming the field on both doors; nothing is created or held", async (url) => {
  const { key, accountId } = await gw.account(1000);
  const c = client(gw, key);
  const native = await c.createTask(EDIT, { prompt: "x", image_urls: ["https://example.com/a.png", url] });
  expect(native.status).toBe(422);
  expect(native.json).toMatchObject({ code: 422, error_code: "invalid_request" });
  expect(native.json.msg).toContain("input.image_urls[1]");
  const alias = await c.call("POST", "/v1/images/generations", { model: EDIT, prompt: "x", image_urls: [url] });
  expect(alias.status).toBe(422);
  expect(alias.json.error).toMatchObject({ code: "invalid_request", param: "image_urls[0]" });
  expect(await gw.ctx.db.all(sql`select id from tasks where account_id = ${accountId}`)).toEqual([]);
  expect(await c.credits()).toMatchObject({ credits: 1000, held_credits: 0 });
});

test("public input URLs are taken, and private ones too where the operator allows them", async () => {
  const { key } = await gw.account(1000);
  expect(
    (await client(gw, key).createTask(EDIT, { prompt: "x", image_urls: ["https://example.com/a.png"] })).status,
  ).toBe(200);
  const other = await open.account(1000);
  const c = client(open, other.key);
  expect((await c.createTask(EDIT, { prompt: "x", image_urls: ["http://10.1.2.3/a.png"] })).status).toBe(200);
});
