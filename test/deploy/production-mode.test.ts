import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { spawnGateway, type GatewayProcess } from "../support/process";
import { tempSqlitePath } from "../support/services";
import { errorOf } from "../support/json";

// The image runs with NODE_ENV=production: Bun.serve leaves its development mode (error pages with source), and
// Elysia stops building an example value and a summary quoting the input for every failed validation. The gateway's
// own error shapes must be the same there: its 422 names the field from TypeBox's error, not Elysia's message.
setDefaultTimeout(30_000);
const root = new URL("../..", import.meta.url).pathname;
let gw: GatewayProcess | undefined;
afterAll(() => gw?.stop());

/** The ENV lines of the Dockerfile's last stage (the image that runs). */
async function runStageEnv(): Promise<string> {
  const dockerfile = await Bun.file(root + "Dockerfile").text();
  const stages = dockerfile.split(/^FROM /m);
  return stages
    .at(-1)!
    .split("\n")
    .filter((l) => l.startsWith("ENV "))
    .join(" ");
}

describe("production mode", () => {
  test("the image's run stage sets NODE_ENV=production", async () => {
    expect(await runStageEnv()).toMatch(/\bNODE_ENV=production\b/);
  });

  test("with NODE_ENV=production, a body the schema refuses is still the gateway's 422 naming the field", async () => {
    gw = await spawnGateway({
      NODE_ENV: "production",
      DATABASE_URL: tempSqlitePath(),
      ADMIN_TOKEN: "a-long-enough-admin-token-for-tests",
    });
    const r = await fetch(gw.url + "/admin/v1/accounts", {
      method: "POST",
      headers: { authorization: "Bearer a-long-enough-admin-token-for-tests", "content-type": "application/json" },
      body: JSON.stringify({ name: 5 }),
    });
    expect(r.status).toBe(422);
    const body = await errorOf(r);
    expect(body.error).toMatchObject({ code: "invalid_request", param: "name" });
    expect(JSON.stringify(body)).not.toContain('"found"');
  });
});
