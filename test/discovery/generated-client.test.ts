// A TypeScript client generated from /openapi.json by a maintained generator (openapi-typescript + openapi-fetch),
// compiled by tsc in strict mode, and used against a running gateway (fake upstreams): an LLM call with a key, a
// media task creation and a balance read. A document a generator cannot use fails here, not at a customer's.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import openapiTS, { astToString, type OpenAPI3 } from "openapi-typescript";
import { startFakeLlmUpstream } from "../fakes/llm-upstream";
import { providerEnv } from "../llm/support";
import { startMediaGateway, type MediaGateway } from "../media/support";
import type { AccountView } from "../../src/accounts/model";
import { jsonOf, type AnswerOf } from "../support/json";

let gw: MediaGateway;
let fake: ReturnType<typeof startFakeLlmUpstream>;
let dir: string;
beforeAll(async () => {
  fake = startFakeLlmUpstream();
  gw = await startMediaGateway(providerEnv(fake.url), { autostart: false });
  dir = mkdtempSync(join(tmpdir(), "sy-client-"));
  symlinkSync(resolve(import.meta.dir, "../../node_modules"), join(dir, "node_modules"));
});
afterAll(async () => {
  await gw.stop();
  await fake.stop();
});

// What a customer writes with the generated types: every path, body and answer field below is checked by tsc.
const CLIENT = `
import createClient from "openapi-fetch";
import type { paths } from "./schema";

export async function run(baseUrl: string, key: string) {
  const api = createClient<paths, "application/json">({ baseUrl, headers: { authorization: "Bearer " + key } });
  const chat = await api.POST("/v1/chat/completions", {
    body: { model: "gpt-5.2", messages: [{ role: "user", content: "Hello" }], max_completion_tokens: 64, max_credits: 50 },
  });
  const task = await api.POST("/api/v1/jobs/createTask", {
    body: { model: "google/nano-banana", input: { prompt: "a fox" }, max_credits: 100 },
  });
  const balance = await api.GET("/v1/credits");
  const card = await api.GET("/v1/models/{model_id}", { params: { path: { model_id: "google/nano-banana" } } });
  const refused = await api.POST("/v1/images/generations", { body: { model: "google/nano-banana", prompt: "a fox", max_credits: 1 } });
  const content = chat.data?.choices[0]?.message?.content;
  const taskId: string | undefined = task.data?.data.taskId;
  const credits: number | undefined = balance.data?.credits;
  const heldCredits: number | undefined = balance.data?.held_credits;
  const inputSchema = card.data?.input_schema;
  const refusal: string | undefined = refused.error?.error.code;
  return { chatStatus: chat.response.status, content, taskId, credits, heldCredits, inputSchema, refusal, refusedStatus: refused.response.status };
}
`;

describe("a client generated from /openapi.json", () => {
  test("compiles under tsc (strict) and its calls succeed: an LLM call, a task, a balance read", async () => {
    const doc = await jsonOf<OpenAPI3>(await fetch(gw.url + "/openapi.json"));
    writeFileSync(join(dir, "schema.ts"), astToString(await openapiTS(doc)));
    writeFileSync(join(dir, "client.ts"), CLIENT);
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ESNext",
          module: "ESNext",
          moduleResolution: "bundler",
          lib: ["ESNext", "DOM"],
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: [],
        }, // schema.ts is ours, so it is checked
        include: ["client.ts", "schema.ts"],
      }),
    );
    const tsc = Bun.spawnSync([resolve(import.meta.dir, "../../node_modules/.bin/tsc"), "-p", dir], { cwd: dir });
    expect(tsc.stdout.toString() + tsc.stderr.toString()).toBe("");
    expect(tsc.exitCode).toBe(0);

    const { accountId, key } = await gw.account(1000);
    const { run } = await import(join(dir, "client.ts"));
    const r = await run(gw.url, key);
    expect(r.chatStatus).toBe(200);
    expect(typeof r.content).toBe("string");
    expect(r.taskId).toStartWith("task_");
    expect(r.inputSchema.type).toBe("object");
    // the error answer is typed too: a budget below the estimate is refused before anything is created
    expect(r.refusedStatus).toBe(402);
    expect(r.refusal).toBe("max_credits_exceeded");
    // the balance the client read: the task's hold is held, the chat call charged (both below what was there)
    expect(r.heldCredits).toBeGreaterThan(0);
    expect(r.credits + r.heldCredits).toBeLessThan(1000);
    const view = await jsonOf<AnswerOf<typeof AccountView>>(await gw.admin(`/admin/v1/accounts/${accountId}`));
    expect(view.holds!.some((h) => h.ref === r.taskId || h.kind === "task")).toBe(true);
  }, 120_000);
});
