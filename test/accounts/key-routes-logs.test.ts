// The key routes' body schemas are ones Elysia can build its exact cleaner from: creating and changing keys leaves
// the operator's log as JSON lines (no framework warning on stderr, no schema dumped to stdout).
import { expect, setDefaultTimeout, test } from "bun:test";
import { ADMIN_TOKEN } from "../support/gateway";
import { spawnGateway } from "../support/process";
import { tempSqlitePath } from "../support/services";

setDefaultTimeout(30_000);

test("creating and changing keys writes nothing but JSON log lines", async () => {
  const gw = await spawnGateway({ DATABASE_URL: tempSqlitePath(), ADMIN_TOKEN });
  const admin = (method: string, path: string, body: unknown) =>
    fetch(gw.url + path, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const account = (await (await admin("POST", "/admin/v1/accounts", { name: "logs", credits: 5 })).json()) as {
    id: string;
  };
  const created = await admin("POST", `/admin/v1/accounts/${account.id}/keys`, {
    name: "k",
    models: ["claude-*"],
    budget: { day: 1 },
  });
  expect(created.status).toBe(201);
  const { id } = (await created.json()) as { id: string };
  expect(
    (await admin("PATCH", `/admin/v1/accounts/${account.id}/keys/${id}`, { rate_limit: null, budget: null })).status,
  ).toBe(200);
  await gw.stop();

  expect(await new Response(gw.proc.stderr).text()).toBe("");
  const notJson = gw
    .stdout()
    .trim()
    .split("\n")
    .filter((line) => {
      try {
        return typeof JSON.parse(line) !== "object";
      } catch {
        return true;
      }
    });
  expect(notJson).toEqual([]);
});
