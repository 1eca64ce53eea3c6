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
//   /dashboard, /dashboard/* HTML pages and form posts for people with a session cookie, not an API.
const excluded = (path: string) => path === "/openapi.json" || path === "/dashboard" || path.startsWith("/dashboard/");

const toOpenApiPath = (path: string) => path.replace(/:([^/]+)/g, "{$1}").replace(/\*$/, "{wildcard}");

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
    const routes = gw.app.routes.filter((r) => !excluded(r.path));
    expect(routes.length).toBeGreaterThan(15);
    const missing = routes.filter((r) => !doc.paths[toOpenApiPath(r.path)]?.[r.method.toLowerCase()]).map((r) => `${r.method} ${r.path}`);
    expect(missing).toEqual([]);
    // and the other way round: nothing documented that the server does not serve
    const served = new Set(gw.app.routes.map((r) => `${r.method.toLowerCase()} ${toOpenApiPath(r.path)}`));
    for (const [path, item] of Object.entries<any>(doc.paths))
      for (const method of Object.keys(item)) expect(served.has(`${method} ${path}`)).toBe(true);
  });

  test("the discovery, operations and dashboard-admin routes are there", () => {
    for (const [path, method] of [["/.well-known/api-catalog", "get"], ["/.well-known/api-catalog", "head"], ["/auth.md", "get"], ["/docs", "get"],
      ["/readyz", "get"], ["/metrics", "get"], ["/healthz", "get"], ["/admin/v1/accounts/{id}/users", "post"], ["/v1/credits", "get"]])
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
      for (const op of Object.values<any>(item)) for (const s of op.security ?? []) for (const k of Object.keys(s)) used.add(k);
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
