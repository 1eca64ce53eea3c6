// Every documented operation called for real (fake upstreams), for its success and the failures the README and the
// document promise, and each answer checked against what /openapi.json declares for it (test/support/
// openapi-answers.ts): the status listed with the error's code, the content-type, the body's schema. A generated
// client trusts the document; an answer it does not describe is a defect here.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeLlmUpstream } from "../fakes/llm-upstream";
import { providerEnv } from "../llm/support";
import { client, startMediaGateway, type MediaGateway } from "../media/support";
import { answerChecker, answerOf } from "../support/openapi-answers";
import { ADMIN_TOKEN } from "../support/gateway";
import { jsonOf } from "../support/json";

let gw: MediaGateway;
let fake: ReturnType<typeof startFakeLlmUpstream>;
let problems: ReturnType<typeof answerChecker>;
let key: string;
let accountId: string;
let keyId: string;
let poor: string; // a key of an account with almost no credits
let taskId: string;

beforeAll(async () => {
  fake = startFakeLlmUpstream();
  gw = await startMediaGateway({
    ...providerEnv(fake.url),
    LLM_FIRST_BYTE_TIMEOUT_SECONDS: "1",
    MAX_REQUEST_BODY_MB: "1",
    REQUEST_BODY_TIMEOUT_SECONDS: "1",
  });
  problems = answerChecker(await jsonOf<Record<string, any>>(await fetch(gw.url + "/openapi.json")));
  ({ key, accountId, keyId } = await gw.account(1000, { maxConcurrentTasks: 10 }));
  poor = (await gw.account(0.001)).key;
  const created: any = await (
    await gw.post(key, "/api/v1/jobs/createTask", { model: "google/nano-banana", input: { prompt: "a fox" } })
  ).json();
  taskId = created.data.taskId;
});
afterAll(async () => {
  await gw?.stop();
  await fake?.stop();
});

const get = (path: string, headers: Record<string, string> = {}) => fetch(gw.url + path, { headers });
const keyed = (path: string, headers: Record<string, string> = {}) =>
  get(path, { authorization: `Bearer ${key}`, ...headers });

/** Calls `send`, then checks the answer against `method template`; the status is asserted too, so a case tests what it says. */
async function conforms(method: string, template: string, status: number, send: () => Promise<Response>) {
  const answer = await answerOf(await send());
  expect({ status: answer.status, body: answer.text.slice(0, 300) }).toMatchObject({ status });
  expect(problems(method, template, answer)).toEqual([]);
}

describe("public answers match the document", () => {
  test.each([
    ["/healthz", "/healthz"],
    ["/readyz", "/readyz"],
    ["/metrics", "/metrics"],
    ["/v1/models", "/v1/models"],
    ["/v1/models/gpt-5.2", "/v1/models/{model_id}"],
    ["/v1/models/google/nano-banana", "/v1/models/{model_id}"],
    ["/v1/models/claude-opus-4-1", "/v1/models/{model_id}"],
    ["/", "/"],
    ["/pricing", "/pricing"],
    ["/models/gpt-5.2", "/models/{model_id}"],
    ["/llms.txt", "/llms.txt"],
    ["/docs", "/docs"],
    ["/auth.md", "/auth.md"],
    ["/.well-known/api-catalog", "/.well-known/api-catalog"],
  ])("GET %s", async (path, template) => {
    await conforms("get", template, 200, () => get(path));
  });

  test("HEAD /.well-known/api-catalog", async () => {
    await conforms("head", "/.well-known/api-catalog", 200, () =>
      fetch(gw.url + "/.well-known/api-catalog", { method: "HEAD" }),
    );
  });

  test("GET /v1/models/{id} of an unknown model: 404", async () => {
    await conforms("get", "/v1/models/{model_id}", 404, () => get("/v1/models/no-such-model"));
  });

  test("GET / asking for JSON", async () => {
    await conforms("get", "/", 200, () => get("/", { accept: "application/json" }));
  });

  test("GET /pricing with the ETag it gave: 304", async () => {
    const etag = (await get("/pricing?type=llm")).headers.get("etag")!;
    await conforms("get", "/pricing", 304, () => get("/pricing?type=llm", { "if-none-match": etag }));
  });

  test("GET /models/{id} with the ETag it gave: 304", async () => {
    const etag = (await get("/models/gpt-5.2")).headers.get("etag")!;
    await conforms("get", "/models/{model_id}", 304, () => get("/models/gpt-5.2", { "if-none-match": etag }));
  });

  test("GET /models/{id} of an alias: 301 to the model's card", async () => {
    await conforms("get", "/models/{model_id}", 301, () =>
      fetch(gw.url + "/models/claude-3-5-haiku-latest", { redirect: "manual" }),
    );
  });

  test("GET /models/{id} of an unknown model: 404", async () => {
    await conforms("get", "/models/{model_id}", 404, () => get("/models/no-such-model"));
  });

  test("GET /files/{token}/{name} of an unknown file: 404", async () => {
    await conforms("get", "/files/{token}/{name}", 404, () => get("/files/nope/result.png"));
  });
});

describe("keyed reads match the document", () => {
  test.each([
    ["/v1/credits", "/v1/credits"],
    ["/v1/key", "/v1/key"],
    ["/v1/usage", "/v1/usage"],
    ["/v1/usage/summary", "/v1/usage/summary"],
  ])("GET %s", async (path, template) => {
    await conforms("get", template, 200, () => keyed(path));
  });

  test("GET /v1/key of a key with every policy set", async () => {
    const r: any = await (
      await gw.admin(`/admin/v1/accounts/${accountId}/keys`, {
        method: "POST",
        body: JSON.stringify({
          name: "fenced",
          models: ["claude-*", "gpt-5.2"],
          expires_at: new Date(Date.now() + 86_400_000).toISOString(),
          budget: { day: 5, month: 50 },
          rate_limit: { requests: 10, window_seconds: 60 },
          max_concurrent_tasks: 3,
        }),
      })
    ).json();
    await gw.post(r.key, "/v1/messages", { model: "claude-opus-4-5", ...LLM_CALLS[0]![2] }); // spends some budget
    await conforms("get", "/v1/key", 200, () => get("/v1/key", { authorization: `Bearer ${r.key}` }));
    await conforms("get", "/admin/v1/accounts/{id}/keys", 200, () => gw.admin(`/admin/v1/accounts/${accountId}/keys`));
  });

  test("GET /v1/usage as CSV", async () => {
    await conforms("get", "/v1/usage", 200, () => keyed("/v1/usage", { accept: "text/csv" }));
  });

  test("GET /v1/usage with a bad limit: 422", async () => {
    await conforms("get", "/v1/usage", 422, () => keyed("/v1/usage?limit=abc"));
  });

  test("GET /v1/usage/summary with a bad group_by: 422", async () => {
    await conforms("get", "/v1/usage/summary", 422, () => keyed("/v1/usage/summary?group_by=planet"));
  });

  test("GET /v1/credits without a key: 401", async () => {
    await conforms("get", "/v1/credits", 401, () => get("/v1/credits"));
  });

  test("GET /v1/credits past the key's rate limit: 429", async () => {
    const limited = (await gw.account(10, { rateRequests: 1, rateWindowSeconds: 60 })).key;
    await fetch(gw.url + "/v1/credits", { headers: { authorization: `Bearer ${limited}` } });
    await conforms("get", "/v1/credits", 429, () => get("/v1/credits", { authorization: `Bearer ${limited}` }));
  });

  test("POST /v1/credits/estimate", async () => {
    await conforms("post", "/v1/credits/estimate", 200, () =>
      gw.post(key, "/v1/credits/estimate", { model: "google/nano-banana", input: { prompt: "a fox" } }),
    );
  });

  test("POST /v1/media/upstream-events/{provider}", async () => {
    await conforms("post", "/v1/media/upstream-events/{provider}", 200, () =>
      gw.post("", "/v1/media/upstream-events/kie", { code: 200, msg: "ok", data: { task_id: "nope" } }),
    );
  });

  test("POST /v1/media/upstream-events/{provider} past the per-address limit: 429", async () => {
    const send = () => gw.post("", "/v1/media/upstream-events/kie", { code: 200, data: {} });
    let last = await send();
    for (let i = 0; i < 300 && last.status !== 429; i++) last = await send();
    await conforms("post", "/v1/media/upstream-events/{provider}", 429, async () => last);
  });

  test("POST /v1/credits/estimate of an unknown model: 422", async () => {
    await conforms("post", "/v1/credits/estimate", 422, () =>
      gw.post(key, "/v1/credits/estimate", { model: "no-such-model", input: {} }),
    );
  });
});

const LLM_CALLS: Array<[string, string, Record<string, unknown>]> = [
  ["/v1/messages", "claude-opus-4-5", { messages: [{ role: "user", content: "Hi" }], max_tokens: 64 }],
  ["/v1/chat/completions", "gpt-5.2", { messages: [{ role: "user", content: "Hi" }], max_completion_tokens: 64 }],
  ["/v1/responses", "gpt-4.1", { input: "Hi", max_output_tokens: 64 }],
];

describe("LLM answers match the document", () => {
  for (const [path, model, rest] of LLM_CALLS) {
    describe(path, () => {
      const call = (body: Record<string, unknown>, headers: Record<string, string> = {}, k = key) =>
        gw.post(k, path, { model, ...rest, ...body }, headers);
      test("200 JSON", async () => {
        await conforms("post", path, 200, () => call({}));
      });
      test("200 stream", async () => {
        await conforms("post", path, 200, () => call({ stream: true }));
      });
      test("200 stream cut by the upstream: the stream's error event", async () => {
        fake.enqueue({ kind: "drop", dropAfterEvents: 2 });
        const answer = await answerOf(await call({ stream: true }));
        fake.reset();
        expect(answer.status).toBe(200);
        expect(answer.text).toContain("error");
        expect(problems("post", path, answer)).toEqual([]);
      });
      test("401 without a key", async () => {
        await conforms("post", path, 401, () => call({}, {}, "sk-sy-nope"));
      });
      test("402 insufficient_credits", async () => {
        await conforms("post", path, 402, () => call({}, {}, poor));
      });
      test("402 max_credits_exceeded", async () => {
        await conforms("post", path, 402, () => call({ max_credits: 0.0001 }));
      });
      test("404 model_not_found", async () => {
        await conforms("post", path, 404, () => call({ model: "no-such-model" }));
      });
      test("410 model_retired", async () => {
        await conforms("post", path, 410, () => call({ model: "claude-opus-4-1" }));
      });
      test("422 idempotency_key_reused", async () => {
        const k = `reuse-${path}`;
        await call({}, { "idempotency-key": k });
        await conforms("post", path, 422, () => call({ temperature: 0.5 }, { "idempotency-key": k }));
      });
      test("504 the upstream does not answer", async () => {
        fake.enqueue({ kind: "error", status: 200, headersDelayMs: 3000 });
        fake.enqueue({ kind: "error", status: 200, headersDelayMs: 3000 });
        const answer = await answerOf(await call({}));
        fake.reset();
        expect(answer.status).toBe(504);
        expect(problems("post", path, answer)).toEqual([]);
      });
      test("the upstream's 500, passed on", async () => {
        fake.enqueue({ kind: "error", status: 500 });
        fake.enqueue({ kind: "error", status: 500 });
        fake.enqueue({ kind: "error", status: 500 });
        const answer = await answerOf(await call({}));
        fake.reset();
        expect(answer.status).toBe(500);
        expect(problems("post", path, answer, true)).toEqual([]);
      });
      test("429 the upstream's rate limit", async () => {
        fake.enqueue({ kind: "error", status: 429, retryAfter: "0" });
        fake.enqueue({ kind: "error", status: 429, retryAfter: "0" });
        fake.enqueue({ kind: "error", status: 429, retryAfter: "0" });
        const answer = await answerOf(await call({}));
        fake.reset();
        expect(answer.status).toBe(429);
        expect(problems("post", path, answer, true)).toEqual([]);
      });
      test("400 invalid_json", async () => {
        await conforms("post", path, 400, () =>
          fetch(gw.url + path, {
            method: "POST",
            headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
            body: "{",
          }),
        );
      });
      test("422 a malformed Idempotency-Key", async () => {
        await conforms("post", path, 422, () => call({}, { "idempotency-key": "k".repeat(300) }));
      });
    });
  }

  // Each protocol spoken for a model native on another: the gateway writes these answers itself.
  const TRANSLATED: Array<[string, string, Record<string, unknown>]> = [
    ["/v1/messages", "gpt-5.2", LLM_CALLS[0]![2]],
    ["/v1/messages", "gpt-4.1", LLM_CALLS[0]![2]],
    ["/v1/chat/completions", "claude-opus-4-5", LLM_CALLS[1]![2]],
    ["/v1/chat/completions", "gpt-4.1", LLM_CALLS[1]![2]],
    ["/v1/responses", "claude-opus-4-5", LLM_CALLS[2]![2]],
    ["/v1/responses", "gpt-5.2", LLM_CALLS[2]![2]],
  ];
  for (const [path, model, rest] of TRANSLATED)
    for (const stream of [false, true])
      test(`${path} translated for ${model}${stream ? ", streamed" : ""}`, async () => {
        await conforms("post", path, 200, () => gw.post(key, path, { model, ...rest, stream }));
      });

  for (const [path, model, rest] of TRANSLATED)
    test(`${path} translated for ${model}, streamed and cut by the upstream`, async () => {
      fake.enqueue({ kind: "drop", dropAfterEvents: 2 });
      const answer = await answerOf(await gw.post(key, path, { model, ...rest, stream: true }));
      fake.reset();
      expect(answer.status).toBe(200);
      expect(answer.text).toContain("error");
      expect(problems("post", path, answer)).toEqual([]);
    });

  test("POST /v1/embeddings as base64", async () => {
    await conforms("post", "/v1/embeddings", 200, () =>
      gw.post(key, "/v1/embeddings", {
        model: "text-embedding-3-small",
        input: ["Hi", "there"],
        encoding_format: "base64",
      }),
    );
  });

  test("POST /v1/messages/count_tokens", async () => {
    await conforms("post", "/v1/messages/count_tokens", 200, () =>
      gw.post(key, "/v1/messages/count_tokens", { model: "gpt-5.2", messages: [{ role: "user", content: "Hi" }] }),
    );
  });

  test("POST /v1/embeddings", async () => {
    await conforms("post", "/v1/embeddings", 200, () =>
      gw.post(key, "/v1/embeddings", { model: "text-embedding-3-small", input: "Hi" }),
    );
  });

  test("POST /v1/chat/completions with a key not allowed the model: 403", async () => {
    const r: any = await (
      await gw.admin(`/admin/v1/accounts/${accountId}/keys`, {
        method: "POST",
        body: JSON.stringify({ name: "claude only", models: ["claude-*"] }),
      })
    ).json();
    await conforms("post", "/v1/chat/completions", 403, () =>
      gw.post(r.key, "/v1/chat/completions", { model: "gpt-5.2", ...LLM_CALLS[1]![2] }),
    );
  });

  test("POST /v1/messages past the key's budget: 402 key_budget_exceeded", async () => {
    const r: any = await (
      await gw.admin(`/admin/v1/accounts/${accountId}/keys`, {
        method: "POST",
        body: JSON.stringify({ name: "tiny budget", budget: { day: 0.001 } }),
      })
    ).json();
    await conforms("post", "/v1/messages", 402, () =>
      gw.post(r.key, "/v1/messages", { model: "claude-opus-4-5", ...LLM_CALLS[0]![2] }),
    );
  });

  test("POST /v1/messages/count_tokens of a retired model: 410", async () => {
    await conforms("post", "/v1/messages/count_tokens", 410, () =>
      gw.post(key, "/v1/messages/count_tokens", {
        model: "claude-opus-4-1",
        messages: [{ role: "user", content: "Hi" }],
      }),
    );
  });

  test("POST /v1/messages with a body over the limit: 413", async () => {
    await conforms("post", "/v1/messages", 413, () =>
      gw.post(key, "/v1/messages", { model: "claude-opus-4-5", max_tokens: 5, messages: "x".repeat(2 * 1024 ** 2) }),
    );
  });
});

describe("task answers match the document", () => {
  test("POST /api/v1/jobs/createTask", async () => {
    await conforms("post", "/api/v1/jobs/createTask", 200, () =>
      gw.post(key, "/api/v1/jobs/createTask", { model: "google/nano-banana", input: { prompt: "a cat" } }),
    );
  });

  test("POST /api/v1/jobs/createTask without a key: 401", async () => {
    await conforms("post", "/api/v1/jobs/createTask", 401, () =>
      gw.post("sk-sy-nope", "/api/v1/jobs/createTask", { model: "google/nano-banana", input: { prompt: "a" } }),
    );
  });

  test("POST /api/v1/jobs/createTask without credits: 402", async () => {
    await conforms("post", "/api/v1/jobs/createTask", 402, () =>
      gw.post(poor, "/api/v1/jobs/createTask", { model: "google/nano-banana", input: { prompt: "a" } }),
    );
  });

  test("POST /api/v1/jobs/createTask of an unknown model: 422", async () => {
    await conforms("post", "/api/v1/jobs/createTask", 422, () =>
      gw.post(key, "/api/v1/jobs/createTask", { model: "no-such-model", input: { prompt: "a" } }),
    );
  });

  test("POST /api/v1/jobs/createTask of a retired model: 410", async () => {
    const models: any = await (await get("/v1/models")).json();
    const retired = models.data.find((m: any) => m.type !== "llm" && m.status === "retired");
    await conforms("post", "/api/v1/jobs/createTask", 410, () =>
      gw.post(key, "/api/v1/jobs/createTask", { model: retired.id, input: { prompt: "a" } }),
    );
  });

  test("POST /v1/credits/estimate of a retired model: 410", async () => {
    const models: any = await (await get("/v1/models")).json();
    const retired = models.data.find((m: any) => m.type !== "llm" && m.status === "retired");
    await conforms("post", "/v1/credits/estimate", 410, () =>
      gw.post(key, "/v1/credits/estimate", { model: retired.id, input: { prompt: "a" } }),
    );
  });

  test("POST /v1/videos twice with one Idempotency-Key and two bodies: 422", async () => {
    const video = (prompt: string) =>
      gw.post(key, "/v1/videos", { model: "kling-3.0/video", prompt }, { "idempotency-key": "one-video" });
    await video("a fox");
    await conforms("post", "/v1/videos", 422, () => video("a cat"));
  });

  test("GET /api/v1/jobs/recordInfo", async () => {
    await conforms("get", "/api/v1/jobs/recordInfo", 200, () => keyed(`/api/v1/jobs/recordInfo?taskId=${taskId}`));
  });

  test("GET /api/v1/jobs/recordInfo of an unknown task: 404", async () => {
    await conforms("get", "/api/v1/jobs/recordInfo", 404, () => keyed("/api/v1/jobs/recordInfo?taskId=task_nope"));
  });

  test("GET /v1/tasks/{task_id}", async () => {
    await conforms("get", "/v1/tasks/{task_id}", 200, () => keyed(`/v1/tasks/${taskId}`));
  });

  test("a task that succeeded, on both doors", async () => {
    const c = client(gw, key);
    const { json } = await c.createTask("google/nano-banana", { prompt: "a heron" });
    expect(await c.waitRecord(json.data.taskId)).toMatchObject({ state: "success" });
    const id = json.data.taskId;
    await conforms("get", "/api/v1/jobs/recordInfo", 200, () => keyed(`/api/v1/jobs/recordInfo?taskId=${id}`));
    await conforms("get", "/v1/tasks/{task_id}", 200, () => keyed(`/v1/tasks/${id}`));
    const task: any = await (await keyed(`/v1/tasks/${id}`)).json();
    const file = new URL(task.result_urls[0]);
    await conforms("get", "/files/{token}/{name}", 200, () => get(file.pathname));
  });

  test("a task that failed, on both doors", async () => {
    const c = client(gw, key);
    gw.up.control.set({ fail: { message: "nsfw content", code: "content_policy_violation" } });
    try {
      const { json } = await c.createTask("google/nano-banana", { prompt: "a heron" });
      expect(await c.waitRecord(json.data.taskId)).toMatchObject({ state: "fail" });
      const id = json.data.taskId;
      await conforms("get", "/api/v1/jobs/recordInfo", 200, () => keyed(`/api/v1/jobs/recordInfo?taskId=${id}`));
      await conforms("get", "/v1/tasks/{task_id}", 200, () => keyed(`/v1/tasks/${id}`));
    } finally {
      gw.up.control.reset();
    }
  });

  test("GET /v1/tasks/{task_id} of an unknown task: 404", async () => {
    await conforms("get", "/v1/tasks/{task_id}", 404, () => keyed("/v1/tasks/task_nope"));
  });

  test("POST /v1/images/generations", async () => {
    await conforms("post", "/v1/images/generations", 200, () =>
      gw.post(key, "/v1/images/generations", { model: "google/nano-banana", prompt: "a cat" }),
    );
  });

  test("POST /v1/images/generations with max_credits below the estimate: 402", async () => {
    await conforms("post", "/v1/images/generations", 402, () =>
      gw.post(key, "/v1/images/generations", { model: "google/nano-banana", prompt: "a cat", max_credits: 1 }),
    );
  });
});

describe("a body that stops arriving: 408 on every route that takes one", () => {
  test.each([
    ["/v1/credits/estimate"],
    ["/api/v1/jobs/createTask"],
    ["/v1/videos"],
    ["/v1/embeddings"],
    ["/admin/v1/accounts"],
  ])("POST %s", async (path) => {
    const token = path.startsWith("/admin") ? ADMIN_TOKEN : key;
    await conforms("post", path, 408, () => {
      const body = new ReadableStream({
        start: (c) => c.enqueue(new TextEncoder().encode('{"model":')), // and nothing more
      });
      return fetch(gw.url + path, {
        method: "POST",
        body,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        duplex: "half",
      } as RequestInit);
    });
  });
});

describe("admin answers match the document", () => {
  test("POST /admin/v1/accounts", async () => {
    await conforms("post", "/admin/v1/accounts", 201, () =>
      gw.admin("/admin/v1/accounts", { method: "POST", body: JSON.stringify({ name: "Ada", credits: 5 }) }),
    );
  });
  test("GET /admin/v1/accounts", async () => {
    await conforms("get", "/admin/v1/accounts", 200, () => gw.admin("/admin/v1/accounts"));
  });
  test("GET /admin/v1/accounts/{id}", async () => {
    await conforms("get", "/admin/v1/accounts/{id}", 200, () => gw.admin(`/admin/v1/accounts/${accountId}`));
  });
  test("GET /admin/v1/accounts/{id} unknown: 404", async () => {
    await conforms("get", "/admin/v1/accounts/{id}", 404, () => gw.admin("/admin/v1/accounts/acct_nope"));
  });
  test("GET /admin/v1/accounts/{id}/keys", async () => {
    await conforms("get", "/admin/v1/accounts/{id}/keys", 200, () => gw.admin(`/admin/v1/accounts/${accountId}/keys`));
  });
  test("POST /admin/v1/accounts/{id}/keys", async () => {
    await conforms("post", "/admin/v1/accounts/{id}/keys", 201, () =>
      gw.admin(`/admin/v1/accounts/${accountId}/keys`, { method: "POST", body: JSON.stringify({ name: "k" }) }),
    );
  });
  test("PATCH /admin/v1/accounts/{id}/keys/{keyId}", async () => {
    await conforms("patch", "/admin/v1/accounts/{id}/keys/{keyId}", 200, () =>
      gw.admin(`/admin/v1/accounts/${accountId}/keys/${keyId}`, {
        method: "PATCH",
        body: JSON.stringify({ name: "renamed" }),
      }),
    );
  });
  test("POST /admin/v1/accounts/{id}/credits", async () => {
    await conforms("post", "/admin/v1/accounts/{id}/credits", 200, () =>
      gw.admin(`/admin/v1/accounts/${accountId}/credits`, {
        method: "POST",
        body: JSON.stringify({ credits: 1, note: "top-up" }),
      }),
    );
  });
  test("POST /admin/v1/accounts/{id}/credits over what is there: 409", async () => {
    await conforms("post", "/admin/v1/accounts/{id}/credits", 409, () =>
      gw.admin(`/admin/v1/accounts/${accountId}/credits`, {
        method: "POST",
        body: JSON.stringify({ credits: -1_000_000, kind: "correction" }),
      }),
    );
  });
  test("POST /admin/v1/accounts/{id}/webhook-key", async () => {
    await conforms("post", "/admin/v1/accounts/{id}/webhook-key", 201, () =>
      gw.admin(`/admin/v1/accounts/${accountId}/webhook-key`, { method: "POST" }),
    );
  });
  test("GET /admin/v1/ledger/check", async () => {
    await conforms("get", "/admin/v1/ledger/check", 200, () => gw.admin("/admin/v1/ledger/check"));
  });
  test("POST /admin/v1/accounts/{id}/users", async () => {
    await conforms("post", "/admin/v1/accounts/{id}/users", 201, () =>
      gw.admin(`/admin/v1/accounts/${accountId}/users`, {
        method: "POST",
        body: JSON.stringify({ email: "ada@example.com", password: "correct horse battery" }),
      }),
    );
  });
  test("POST /admin/v1/accounts/{id}/users with an email taken: 409", async () => {
    const user = { email: "bo@example.com", password: "correct horse battery" };
    const create = () =>
      gw.admin(`/admin/v1/accounts/${accountId}/users`, { method: "POST", body: JSON.stringify(user) });
    await create();
    await conforms("post", "/admin/v1/accounts/{id}/users", 409, create);
  });
  test("POST /admin/v1/accounts/{id}/users of an unknown account: 404", async () => {
    await conforms("post", "/admin/v1/accounts/{id}/users", 404, () =>
      gw.admin("/admin/v1/accounts/acct_nope/users", {
        method: "POST",
        body: JSON.stringify({ email: "cy@example.com", password: "correct horse battery" }),
      }),
    );
  });
  test("PATCH /admin/v1/accounts/{id}/keys/{keyId} of a revoked key: 409", async () => {
    const k: any = await (
      await gw.admin(`/admin/v1/accounts/${accountId}/keys`, { method: "POST", body: JSON.stringify({ name: "old" }) })
    ).json();
    await gw.admin(`/admin/v1/accounts/${accountId}/keys/${k.id}`, { method: "DELETE" });
    await conforms("patch", "/admin/v1/accounts/{id}/keys/{keyId}", 409, () =>
      gw.admin(`/admin/v1/accounts/${accountId}/keys/${k.id}`, {
        method: "PATCH",
        body: JSON.stringify({ name: "x" }),
      }),
    );
  });
  test("a bad admin token: 401", async () => {
    await conforms("get", "/admin/v1/accounts", 401, () =>
      get("/admin/v1/accounts", { authorization: "Bearer wrong" }),
    );
  });
  test("DELETE /admin/v1/accounts/{id}/keys/{keyId}", async () => {
    const k: any = await (
      await gw.admin(`/admin/v1/accounts/${accountId}/keys`, { method: "POST", body: JSON.stringify({ name: "gone" }) })
    ).json();
    await conforms("delete", "/admin/v1/accounts/{id}/keys/{keyId}", 200, () =>
      gw.admin(`/admin/v1/accounts/${accountId}/keys/${k.id}`, { method: "DELETE" }),
    );
  });
});
