import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway";
import { attrs } from "./html";

// GET / is the first thing a person sees; a wrong base URL gets a 404 in the caller's protocol shape naming the fix.

const BASE = "https://gw.example.com";
let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway({ PUBLIC_BASE_URL: BASE });
});
afterAll(() => gw.stop());

const LINKS = ["/docs", "/pricing", "/dashboard", "/openapi.json", "/auth.md", "/llms.txt"];

describe("GET /", () => {
  test("a browser gets an HTML page linking docs, pricing, dashboard, openapi.json, auth.md and llms.txt, each of which resolves", async () => {
    const r = await fetch(gw.url + "/", { headers: { accept: "text/html,application/xhtml+xml,*/*;q=0.8" } });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("text/html");
    const hrefs = await attrs(await r.text(), "main a", "href");
    for (const l of LINKS) expect(hrefs).toContain(l);
    for (const l of LINKS) expect((await fetch(gw.url + l, { redirect: "manual" })).status).toBeLessThan(400);
  });

  test("Accept: application/json gets a small index with the same links, absolute", async () => {
    const r = await fetch(gw.url + "/", { headers: { accept: "application/json" } });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("application/json");
    const body: any = await r.json();
    expect(body.name).toBe("Switchyard");
    expect(body.base_urls).toEqual({ anthropic: BASE, openai: BASE + "/v1" });
    expect(body.links.map((l: any) => l.href)).toEqual(LINKS.map((l) => BASE + l));
  });

  test("HEAD / still answers 200 with no body (Claude Code's probe)", async () => {
    const r = await fetch(gw.url + "/", { method: "HEAD" });
    expect(r.status).toBe(200);
    expect(await r.text()).toBe("");
  });
});

describe("a wrong base URL", () => {
  const post = (path: string) =>
    fetch(gw.url + path, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });

  test("POST /chat/completions: 404 in the OpenAI shape, naming /v1/chat/completions and the missing /v1", async () => {
    const r = await post("/chat/completions");
    expect(r.status).toBe(404);
    const body: any = await r.json();
    expect(body.error.code).toBe("not_found");
    expect(body.error.message).toContain("Did you mean POST /v1/chat/completions?");
    expect(body.error.message).toContain("missing /v1");
  });

  test("POST /v1/chat/completion (a near miss): 404 naming /v1/chat/completions", async () => {
    const body: any = await (await post("/v1/chat/completion")).json();
    expect(body.error.message).toContain("Did you mean POST /v1/chat/completions?");
  });

  for (const [path, fix] of [
    ["/v1/v1/messages", "drop /v1"],
    ["/messages", "missing /v1"],
  ] as const)
    test(`POST ${path}: 404 in the Anthropic shape, naming /v1/messages (${fix})`, async () => {
      const r = await post(path);
      expect(r.status).toBe(404);
      const body: any = await r.json();
      expect(body.type).toBe("error");
      expect(body.error.type).toBe("not_found_error");
      expect(body.error.message).toContain("Did you mean POST /v1/messages?");
      expect(body.error.message).toContain(fix);
    });

  test("a path like no endpoint keeps the plain 404", async () => {
    const body: any = await (await post("/nothing/here")).json();
    expect(body.error.message).toBe("No such route.");
  });
});
