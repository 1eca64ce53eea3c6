// A gateway at work writes nothing to stderr: its logs are JSON lines on stdout. Elysia's default answer cleaner
// (exact-mirror) could not be built for some answer schemas and printed "Failed to create exactMirror" on the first
// key created; the app cleans answers with TypeBox instead.
import { expect, test } from "bun:test";
import { ADMIN_TOKEN } from "../support/gateway";
import { spawnGateway } from "../support/process";
import { tempSqlitePath } from "../support/services";

test("creating an account and a key, reading the key's status and usage: nothing on stderr", async () => {
  const gw = await spawnGateway({ DATABASE_URL: tempSqlitePath(), ADMIN_TOKEN });
  const admin = (path: string, init: RequestInit = {}) =>
    fetch(gw.url + path, { ...init, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" } });
  const account: any = await (await admin("/admin/v1/accounts", { method: "POST", body: JSON.stringify({ name: "quiet", credits: 10 }) })).json();
  const created = await admin(`/admin/v1/accounts/${account.id}/keys`, { method: "POST", body: JSON.stringify({ name: "k", budget: { day: 5 } }) });
  expect(created.status).toBe(201);
  const { key, id: keyId } = (await created.json()) as any;
  expect((await admin(`/admin/v1/accounts/${account.id}/keys/${keyId}`, { method: "PATCH", body: JSON.stringify({ name: "k2" }) })).status).toBe(200);
  for (const path of ["/v1/key", "/v1/usage/summary?group_by=model", "/v1/usage", "/v1/credits"]) {
    expect((await fetch(gw.url + path, { headers: { "x-api-key": key } })).status).toBe(200);
  }
  await Bun.sleep(200);
  await gw.stop();
  expect(await new Response(gw.proc.stderr).text()).toBe("");
}, 30_000);
