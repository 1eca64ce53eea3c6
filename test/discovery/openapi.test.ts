import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway";

// /openapi.json is checked by an independent OpenAPI 3.1 validator, and against the server's own route table:
// a route added without appearing in the document fails here.

let gw: TestGateway;
let doc: any;
beforeAll(async () => {
  gw = await startGateway({ PUBLIC_BASE_URL: "https://gw.example.com" });
  const r = await fetch(gw.url + "/openapi.json");
  expect(r.status).toBe(200);
  expect(r.headers.get("content-type")).toContain("application/json");
  doc = await r.json();
});
afterAll(() => gw.stop());

// Not in the document, on purpose:
//   /openapi.json          the document does not describe itself (the api-catalog links it as service-desc);
//   /dashboard, /dashboard/* HTML pages and form posts for people with a session cookie, not an API;
//   HEAD / and HEAD /api/hello, Claude Code's connectivity probes.
const PROBES = ["HEAD /", "HEAD /api/hello"];
const excluded = (r: { method: string; path: string }) =>
  r.path === "/openapi.json" ||
  r.path === "/dashboard" ||
  r.path.startsWith("/dashboard/") ||
  PROBES.includes(`${r.method} ${r.path}`);

/** The document's path of a route: `:id` → `{id}`; a wildcard `*` has the name its route gave it (any `{name}`). */
const documented = (path: string) => {
  const fixed = path.replace(/:([^/]+)/g, "{$1}");
  if (!fixed.endsWith("*")) return doc.paths[fixed] ? fixed : undefined;
  return Object.keys(doc.paths).find(
    (p) => /^\{[a-z_]+\}$/.test(p.slice(fixed.length - 1)) && p.startsWith(fixed.slice(0, -1)),
  );
};
const operations = () =>
  Object.entries<any>(doc.paths).flatMap(([path, item]) =>
    Object.entries<any>(item).map(([method, op]) => ({ path, method, op })),
  );

describe("/openapi.json", () => {
  test("is a valid OpenAPI 3.1 document (@seriousme/openapi-schema-validator)", async () => {
    expect(doc.openapi).toStartWith("3.1.");
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });

  test("every route the server exposes is in it (walks app.routes)", () => {
    const routes = gw.app.routes.filter((r) => !excluded(r));
    expect(routes.length).toBeGreaterThan(15);
    const missing = routes
      .filter((r) => !doc.paths[documented(r.path) ?? ""]?.[r.method.toLowerCase()])
      .map((r) => `${r.method} ${r.path}`);
    expect(missing).toEqual([]);
    // and the other way round: nothing documented that the server does not serve
    const served = new Set(gw.app.routes.map((r) => `${r.method.toLowerCase()} ${documented(r.path)}`));
    for (const { path, method } of operations()) expect(served.has(`${method} ${path}`)).toBe(true);
  });

  test("every route the server exposes has its request body (if it takes one) and success and error response schemas", () => {
    const noBody = new Set(["POST /admin/v1/accounts/{id}/webhook-key"]);
    const problems: string[] = [];
    for (const r of gw.app.routes.filter((r) => !excluded(r))) {
      const path = documented(r.path)!;
      const op = doc.paths[path][r.method.toLowerCase()];
      const name = `${r.method} ${path}`;
      if (["POST", "PUT", "PATCH"].includes(r.method) && !noBody.has(name)) {
        const schema = op.requestBody?.content?.["application/json"]?.schema;
        if (!schema || !(schema.$ref || schema.oneOf || schema.properties || schema.additionalProperties))
          problems.push(`${name}: no request body schema`);
      }
      const ok = Object.entries<any>(op.responses).filter(([s]) => /^2/.test(s));
      if (!ok.length) problems.push(`${name}: no success response`);
      if (r.method !== "HEAD")
        for (const [s, res] of ok)
          if (!Object.values<any>(res.content ?? {}).every((c) => c.schema) || !res.content)
            problems.push(`${name}: ${s} has no schema`);
      const errors = Object.entries<any>(op.responses).filter(([s]) => !/^[23]/.test(s));
      if (!errors.length) problems.push(`${name}: no error response`);
      for (const [s, res] of errors) {
        if (`${name} ${s}` === "GET /readyz 503") continue; // not an error body: the same status document as its 200
        if (res.content?.["text/html"]?.schema && op.responses["200"]?.content?.["text/html"]) continue; // a page's own error page
        if (!res["x-error-codes"]?.length) problems.push(`${name}: ${s} names no codes`);
        else
          for (const c of res["x-error-codes"])
            if (!res.description.includes(`\`${c}\``)) problems.push(`${name}: ${s} description misses ${c}`);
        if (r.method !== "HEAD" && !res.content?.["application/json"]?.schema)
          problems.push(`${name}: ${s} has no schema`);
      }
    }
    expect(problems).toEqual([]);
  });

  test("numbers are numbers, wildcards have real names, probes and OpenAPI 3.0 leftovers are gone", () => {
    const text = JSON.stringify(doc);
    expect(text).not.toContain('"format":"integer"');
    expect(text).not.toContain('"format":"numeric"');
    expect(text).not.toContain('"nullable"');
    expect(text).not.toContain("wildcard");
    expect(text).not.toContain("patternProperties");
    expect(doc.paths["/v1/models/{model_id}"].get.parameters).toContainEqual(
      expect.objectContaining({ name: "model_id", in: "path", required: true }),
    );
    expect(doc.paths["/models/{model_id}"].get).toBeDefined();
    expect(doc.paths["/api/hello"]).toBeUndefined();
    expect(doc.paths["/"].head).toBeUndefined();
    expect(
      doc.components.schemas.CreditsResponse ??
        doc.paths["/v1/credits"].get.responses["200"].content["application/json"].schema.properties.credits.type,
    ).toBe("number");
    const estimate = doc.paths["/v1/credits/estimate"].post;
    expect(estimate.responses["200"].content["application/json"].schema.properties.estimated_credits.type).toBe(
      "integer",
    );
    expect(doc.paths["/v1/usage"].get.parameters.find((p: any) => p.name === "limit").schema.type).toBe("integer");
  });

  test("the LLM endpoints describe their protocol's fields, answers and stream events, open to unknown fields", () => {
    const s = doc.components.schemas;
    const body = (path: string) => {
      const schema = doc.paths[path].post.requestBody.content["application/json"].schema;
      return s[schema.$ref.split("/").pop()];
    };
    const cases: Array<[string, string[], string]> = [
      [
        "/v1/messages",
        ["model", "messages", "max_tokens", "stream", "tools", "max_credits", "system"],
        "AnthropicStreamEvent",
      ],
      [
        "/v1/responses",
        ["model", "input", "max_output_tokens", "stream", "tools", "max_credits"],
        "ResponsesStreamEvent",
      ],
      [
        "/v1/chat/completions",
        ["model", "messages", "max_completion_tokens", "max_tokens", "stream", "tools", "max_credits"],
        "ChatCompletionStreamEvent",
      ],
    ];
    for (const [path, fields, event] of cases) {
      const b = body(path);
      expect(b.additionalProperties).toBe(true);
      for (const f of fields) expect(b.properties[f]).toBeDefined();
      const ok = doc.paths[path].post.responses["200"].content;
      expect(ok["application/json"].schema.$ref).toStartWith("#/components/schemas/");
      expect(ok["text/event-stream"].schema.$ref).toBe(`#/components/schemas/${event}`);
      expect(doc.paths[path].post.responses["402"]["x-error-codes"]).toEqual([
        "insufficient_credits",
        "max_credits_exceeded",
        "key_budget_exceeded",
      ]);
    }
    expect(body("/v1/embeddings").properties.input).toBeDefined();
    expect(s.AnthropicMessage.properties.usage.properties.input_tokens.type).toBe("integer");
    expect(doc.paths["/v1/messages"].post.responses["200"].content["application/json"].schema.$ref).toBe(
      "#/components/schemas/AnthropicMessage",
    );
    expect(doc.paths["/v1/messages"].post.responses["401"].content["application/json"].schema.$ref).toBe(
      "#/components/schemas/AnthropicError",
    );
  });

  test("task creation is described per media type on both doors, each model linked to its input schema", async () => {
    const s = doc.components.schemas;
    const native = doc.paths["/api/v1/jobs/createTask"].post.requestBody.content["application/json"].schema;
    expect(native.oneOf.map((v: any) => v.$ref)).toEqual(
      ["Image", "Video", "Audio"].map((n) => `#/components/schemas/Create${n}Task`),
    );
    const video = s.CreateVideoTask;
    expect(video.properties.input.$ref).toBe("#/components/schemas/VideoTaskInput");
    expect(Object.keys(s.VideoTaskInput.properties)).toEqual(expect.arrayContaining(["prompt", "duration"]));
    for (const f of ["callBackUrl", "max_credits"]) expect(video.properties[f]).toBeDefined();
    expect(doc.paths["/v1/videos"].post.requestBody.content["application/json"].schema.$ref).toBe(
      "#/components/schemas/VideoTaskRequest",
    );
    expect(s.VideoTaskRequest.properties.callback_url).toBeDefined();
    // each model of the type, and the link to its input JSON Schema resolves to it
    const models: any = await (await fetch(gw.url + "/v1/models")).json();
    const videoIds = models.data.filter((m: any) => m.type === "video").map((m: any) => m.id);
    expect(s.VideoTaskRequest.properties.model.enum).toEqual(videoIds);
    const link: string = s.VideoTaskRequest.properties.model["x-input-schemas"][videoIds[0]];
    expect(link).toBe(`https://gw.example.com/v1/models/${videoIds[0]}`);
    const card: any = await (await fetch(gw.url + new URL(link).pathname)).json();
    expect(card.input_schema.type).toBe("object");
  });

  test("each operation names its own error codes, not another's", () => {
    const codes = (path: string, method: string, status: string) =>
      doc.paths[path][method].responses[status]?.["x-error-codes"];
    for (const path of ["/api/v1/jobs/createTask", "/v1/images/generations", "/v1/videos", "/v1/music/generations"]) {
      expect(codes(path, "post", "402")).toEqual([
        "insufficient_credits",
        "max_credits_exceeded",
        "key_budget_exceeded",
      ]);
      expect(codes(path, "post", "410")).toEqual(["model_retired"]);
      expect(codes(path, "post", "429")).toEqual(["too_many_running_tasks", "rate_limit_exceeded"]);
    }
    expect(codes("/admin/v1/accounts/{id}/credits", "post", "409")).toEqual(["correction_exceeds_available"]);
    expect(codes("/admin/v1/accounts", "get", "409")).toBeUndefined();
    expect(codes("/admin/v1/accounts/{id}", "get", "404")).toEqual(["not_found"]);
    expect(codes("/files/{token}/{name}", "get", "410")).toEqual(["file_expired"]);
    expect(codes("/v1/credits", "get", "401")).toEqual(["invalid_api_key", "key_expired"]);
  });

  test("the POSTs that take an Idempotency-Key declare it as the server reads it (1 to 255 characters)", () => {
    const keyed = ["/v1/messages", "/v1/responses", "/v1/chat/completions", "/v1/embeddings"];
    for (const path of [...keyed, "/api/v1/jobs/createTask", "/v1/images/generations", "/v1/videos"]) {
      const op = doc.paths[path].post;
      expect(op.parameters).toContainEqual(
        expect.objectContaining({
          name: "Idempotency-Key",
          in: "header",
          required: false,
          schema: { type: "string", minLength: 1, maxLength: 255 },
        }),
      );
      expect(op.responses["409"]["x-error-codes"]).toContain("idempotency_in_progress");
      expect(op.responses["422"]["x-error-codes"]).toContain("idempotency_key_reused");
    }
    // count_tokens is free: a key there is ignored, and nothing is held
    const count = doc.paths["/v1/messages/count_tokens"].post;
    expect((count.parameters ?? []).map((p: any) => p.name)).not.toContain("Idempotency-Key");
    expect(count.responses["402"]).toBeUndefined();
  });

  test("the LLM endpoints declare the query and headers they forward upstream", () => {
    const names = (path: string) =>
      (doc.paths[path].post.parameters ?? [])
        .map((p: any) => `${p.in}:${p.name}`)
        .filter((n: string) => !n.includes("Idempotency"));
    for (const path of ["/v1/messages", "/v1/messages/count_tokens"])
      expect(names(path)).toEqual(["query:beta", "header:anthropic-version", "header:anthropic-beta"]);
    for (const path of ["/v1/responses", "/v1/chat/completions"]) expect(names(path)).toEqual(["header:openai-beta"]);
  });

  test("a model's type and lifecycle are declared, as the README says GET /v1/models shows them", () => {
    const model = doc.paths["/v1/models"].get.responses["200"].content["application/json"].schema.properties.data.items;
    expect(model.properties.type.enum ?? model.properties.type.anyOf?.map((b: any) => b.const)).toEqual([
      "llm",
      "embedding",
      "image",
      "video",
      "audio",
    ]);
    expect(model.properties.status.enum ?? model.properties.status.anyOf?.map((b: any) => b.const)).toEqual([
      "current",
      "legacy",
      "retired",
    ]);
    const lifecycle = ["released", "retires_after", "successor", "provider_successor", "source", "checked"];
    expect(model.required).toEqual(expect.arrayContaining(["status", ...lifecycle]));
  });

  test("query parameters state the values the server accepts", () => {
    const param = (path: string, name: string) =>
      doc.paths[path].get.parameters.find((p: any) => p.name === name).schema;
    expect(param("/v1/usage", "limit")).toMatchObject({ type: "integer", minimum: 1, maximum: 1000, default: 100 });
    expect(param("/v1/usage/summary", "group_by")).toMatchObject({
      type: "string",
      enum: ["model", "key", "day"],
      default: "model",
    });
  });

  test("the public pages declare the query parameters and conditional requests they honour", () => {
    const pricing = doc.paths["/pricing"].get;
    const names = (op: any) => op.parameters.map((p: any) => `${p.in}:${p.name}`);
    expect(names(pricing)).toEqual(["query:type", "query:provider", "query:q", "header:If-None-Match"]);
    expect(pricing.parameters[0].schema.enum).toEqual(["llm", "embedding", "image", "video", "audio"]);
    expect(pricing.responses["304"].headers.etag).toBeDefined();
    const card = doc.paths["/models/{model_id}"].get;
    expect(names(card)).toContain("header:If-None-Match");
    expect(card.responses["301"].headers.location).toBeDefined();
    expect(Object.keys(card.responses["404"].content)).toEqual(["text/html"]);
  });

  test("the discovery, operations and dashboard-admin routes are there", () => {
    for (const [path, method] of [
      ["/.well-known/api-catalog", "get"],
      ["/.well-known/api-catalog", "head"],
      ["/auth.md", "get"],
      ["/docs", "get"],
      ["/readyz", "get"],
      ["/metrics", "get"],
      ["/healthz", "get"],
      ["/admin/v1/accounts/{id}/users", "post"],
      ["/v1/credits", "get"],
    ])
      expect(doc.paths[path]?.[method]).toBeDefined();
    expect(Object.keys(doc.paths["/auth.md"].get.responses["200"].content)).toEqual(["text/markdown"]);
    expect(doc.paths["/docs"].get.responses["200"].content["text/html"]).toBeDefined();
  });

  test("declares the three security schemes the routes reference, and uses them", () => {
    expect(doc.components.securitySchemes).toEqual({
      bearer: expect.objectContaining({ type: "http", scheme: "bearer" }),
      apiKey: expect.objectContaining({ type: "apiKey", in: "header", name: "x-api-key" }),
      adminToken: expect.objectContaining({ type: "http", scheme: "bearer" }),
    });
    const used = new Set<string>();
    for (const item of Object.values<any>(doc.paths))
      for (const op of Object.values<any>(item))
        for (const s of op.security ?? []) for (const k of Object.keys(s)) used.add(k);
    for (const k of used) expect(doc.components.securitySchemes[k]).toBeDefined();
    expect(doc.paths["/v1/credits"].get.security).toEqual([{ bearer: [] }, { apiKey: [] }]);
    expect(doc.paths["/admin/v1/accounts/{id}/users"].post.security).toEqual([{ adminToken: [] }]);
  });

  test("error shapes are components, referenced by the operations' error responses, with examples", () => {
    for (const name of ["Error", "AnthropicError", "EnvelopeError"]) {
      expect(doc.components.schemas[name]).toBeDefined();
      expect(doc.components.schemas[name].examples.length).toBeGreaterThan(0);
    }
    const credits = doc.paths["/v1/credits"].get.responses;
    expect(credits["401"].content["application/json"].schema.$ref).toBe("#/components/schemas/Error");
    expect(credits["429"].headers["retry-after"]).toBeDefined();
    expect(doc.paths["/admin/v1/accounts"].post.responses["422"]).toBeDefined();
    expect(doc.components.schemas.Error.examples[0]).toMatchObject({ error: { code: "insufficient_credits" } });
    expect(doc.paths["/readyz"].get.responses["503"].content["application/json"].schema.examples).toBeDefined();
  });

  test("servers and links use PUBLIC_BASE_URL", () => {
    expect(doc.servers).toEqual([{ url: "https://gw.example.com" }]);
    expect(doc.externalDocs.url).toBe("https://gw.example.com/auth.md");
  });
});
