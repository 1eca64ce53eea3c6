// The compiled binary runs media tasks through its Bun Worker (the worker is an extra build entrypoint; without it
// the worker fails with ModuleNotFound only at run time, so this runs a real task through the binary).
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeMediaUpstreams } from "../fakes/media/index";
import { spawnGateway, type GatewayProcess } from "../support/process";
import { client, FAST_ENV } from "./support";
import { jsonOf, type AnswerOf } from "../support/json";
import type { AccountView, KeyCreated } from "../../src/accounts/model";

const ADMIN = "binary-test-admin-token-0123";
const up = startFakeMediaUpstreams();
let gw: GatewayProcess | undefined;
afterAll(async () => {
  await gw?.stop();
  await up.stop();
});

describe("compiled binary", () => {
  test("a media task runs to success in the binary's worker", async () => {
    const out = join(mkdtempSync(join(tmpdir(), "sy-bin-")), "switchyard");
    const root = new URL("../..", import.meta.url).pathname;
    const build = Bun.spawnSync(["bun", "run", "build", "--outfile", out], {
      cwd: root,
      stderr: "pipe",
      stdout: "pipe",
    });
    expect(build.exitCode, build.stderr.toString()).toBe(0);
    gw = await spawnGateway(
      {
        ...up.env,
        ...FAST_ENV,
        LOG_LEVEL: "info",
        DATABASE_URL: "",
        ADMIN_TOKEN: ADMIN,
        DEFAULT_RATE_LIMIT: "1000/10s",
      },
      [out],
      mkdtempSync(join(tmpdir(), "sy-run-")),
    );
    const h = { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" };
    const a = await jsonOf<AnswerOf<typeof AccountView>>(
      await fetch(gw.url + "/admin/v1/accounts", {
        method: "POST",
        headers: h,
        body: JSON.stringify({ name: "b", credits: 100 }),
      }),
    );
    const k = await jsonOf<AnswerOf<typeof KeyCreated>>(
      await fetch(`${gw.url}/admin/v1/accounts/${a.id}/keys`, {
        method: "POST",
        headers: h,
        body: JSON.stringify({ name: "k" }),
      }),
    );
    const c = client(gw, k.key);
    const id = (await c.createTask("z-image", { prompt: "x" })).json.data.taskId;
    expect(await c.waitRecord(id, 10_000)).toMatchObject({ state: "success", creditsConsumed: 4 });
  }, 120_000);
});
