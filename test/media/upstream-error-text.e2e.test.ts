// An upstream's failure text never reaches the customer: the task record (recordInfo's failMsg, the alias's error)
// names the upstream and the class of its status; the operator's log keeps the upstream's message, credentials
// masked. The fake upstreams answer with messages carrying keys, as real refusals can ("Incorrect API key sk-…").
import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { createLogger } from "../../src/log";
import { client, startMediaGateway } from "./support";

const lines: string[] = [];
const gw = await startMediaGateway(
  { MEDIA_WORKERS: "0", LOG_LEVEL: "info" },
  { log: createLogger("info", (l) => void lines.push(l)) },
);
afterAll(() => gw.stop());
beforeEach(() => gw.up.control.reset());

const OPENAI_KEY = "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90";
const GEMINI_KEY = "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY";
const FAL_KEY = "3f2a1b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b:9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b";

const logged = (taskId: string) => lines.filter((l) => l.includes(taskId)).join("\n");

describe("upstream failure text", () => {
  test("a generation failure: the customer sees the upstream and its status class, the log the masked message", async () => {
    const { key } = await gw.account(1000);
    const c = client(gw, key);
    gw.up.control.set(
      {
        fail: {
          message: `billing account of key ${OPENAI_KEY} (org-AbCdEfGhIjKlMnOpQrStUvWx) is suspended`,
          code: "content_policy_violation",
        },
      },
      { provider: "fal" },
    );
    const { json } = await c.createTask("fal-ai/kling-image/o1", { prompt: "x" });
    const rec = await c.waitRecord(json.data.taskId);
    expect(rec).toMatchObject({ state: "fail", failCode: "content_policy_violation", creditsConsumed: 0 });
    expect(rec.failMsg).toBe("The upstream (fal) failed the task (generation error); nothing was charged.");
    const alias = (await c.call("GET", `/v1/tasks/${json.data.taskId}`)).json;
    expect(alias.error.message).toBe(rec.failMsg);
    const log = logged(json.data.taskId);
    expect(log).toContain("is suspended");
    expect(log).not.toContain(OPENAI_KEY);
    expect(log).not.toContain("org-AbCdEfGhIjKlMnOpQrStUvWx");
  });

  test("every route refused: the customer sees each upstream's status class, the log each masked message", async () => {
    const { key } = await gw.account(2000);
    const c = client(gw, key);
    gw.up.control.set({ refuse: { status: 401, message: `API key not valid: ${GEMINI_KEY}` } }, { provider: "veo" });
    gw.up.control.set(
      { refuse: { status: 503, message: `upstream auth Key ${FAL_KEY} rejected` } },
      { provider: "fal" },
    );
    const { json } = await c.createTask("veo-3.1-fast-generate-preview", { prompt: "x" });
    const rec = await c.waitRecord(json.data.taskId);
    expect(rec).toMatchObject({ state: "fail", failCode: "upstream_refused", creditsConsumed: 0 });
    expect(rec.failMsg).toBe("Every upstream refused the task (veo: HTTP 4xx; fal: HTTP 5xx); nothing was charged.");
    const log = logged(json.data.taskId);
    expect(log).toContain("API key not valid");
    expect(log).not.toContain(GEMINI_KEY);
    expect(log).not.toContain(FAL_KEY.split(":")[1]!);
  });
});
