import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { renderDocsPage } from "../../src/discovery/docs-page";
import { signCallback, verifyCallback } from "../../src/media/callback-signing";
import { startGateway, type TestGateway } from "../support/gateway";

const BASE = "https://gw.example.com";
let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway({ PUBLIC_BASE_URL: BASE });
});
afterAll(() => gw.stop());

const PROFILE = "https://www.rfc-editor.org/info/rfc9727";

describe("/.well-known/api-catalog (RFC 9727)", () => {
  test("GET: a linkset with the RFC 9727 profile, anchored at PUBLIC_BASE_URL", async () => {
    const r = await fetch(gw.url + "/.well-known/api-catalog");
    expect(r.status).toBe(200);
    const ct = r.headers.get("content-type")!;
    expect(ct.split(";")[0]!.trim()).toBe("application/linkset+json");
    expect(ct).toContain(`profile="${PROFILE}"`);
    const body: any = await r.json();
    // RFC 9264 JSON linkset: {"linkset": [ {anchor, <relation>: [ {href, type?, title?} ]} ]}
    expect(Object.keys(body)).toEqual(["linkset"]);
    expect(Array.isArray(body.linkset)).toBe(true);
    const ctx = body.linkset[0];
    expect(ctx.anchor).toBe(BASE + "/");
    for (const [rel, targets] of Object.entries<any>(ctx)) {
      if (rel === "anchor") continue;
      expect(Array.isArray(targets)).toBe(true);
      for (const t of targets) expect(new URL(t.href).origin).toBe(BASE);
    }
    const hrefs = (rel: string) => ctx[rel].map((t: any) => t.href);
    expect(hrefs("service-desc")).toEqual([BASE + "/openapi.json"]);
    expect(hrefs("service-doc")).toContain(BASE + "/docs");
    expect(hrefs("status")).toEqual([BASE + "/readyz"]);
    expect(hrefs("service-meta")).toContain(BASE + "/pricing");
  });

  test("HEAD: the same headers, a Link with rel api-catalog, no body", async () => {
    const r = await fetch(gw.url + "/.well-known/api-catalog", { method: "HEAD" });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("application/linkset+json");
    expect(r.headers.get("link")).toBe(`<${BASE}/.well-known/api-catalog>; rel="api-catalog"`);
    expect(await r.text()).toBe("");
  });

  test("the links it gives resolve on this gateway", async () => {
    for (const path of ["/openapi.json", "/docs", "/readyz", "/auth.md"])
      expect((await fetch(gw.url + path)).status).toBe(200);
  });
});

describe("/auth.md", () => {
  let md: string;
  beforeAll(async () => {
    const r = await fetch(gw.url + "/auth.md");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toStartWith("text/markdown");
    md = await r.text();
  });

  test("names both key headers, where keys come from, the signing scheme and the browser rule", () => {
    for (const s of [
      "Authorization: Bearer <API_KEY>",
      "x-api-key: <API_KEY>",
      "Settings → API Keys",
      "/admin/v1/accounts/{id}/keys",
      "key:create",
      "X-Webhook-Timestamp",
      "X-Webhook-Signature",
      "HMAC-SHA256",
      "<taskId>.<timestamp>",
      "never go into browser or mobile code",
      "5 minutes",
    ])
      expect(md).toContain(s);
  });

  test("its TypeScript verification example verifies a signature made by node:crypto, and refuses bad ones", async () => {
    const code = /```ts\n([\s\S]*?)```/.exec(md)![1]!;
    const file = join(mkdtempSync(join(tmpdir(), "sy-authmd-")), "verify.ts");
    writeFileSync(file, code);
    const { verifySwitchyardWebhook } = await import(file);
    const key = "whsec_" + "k".repeat(43);
    const taskId = "task_0195f2c5a1b27c3d";
    const ts = String(Math.floor(Date.now() / 1000));
    const sig = createHmac("sha256", key).update(`${taskId}.${ts}`).digest("base64"); // independent implementation
    expect(await verifySwitchyardWebhook(key, taskId, ts, sig)).toBe(true);
    expect(await verifySwitchyardWebhook(key + "x", taskId, ts, sig)).toBe(false); // other key
    expect(await verifySwitchyardWebhook(key, "task_other", ts, sig)).toBe(false); // other task
    expect(await verifySwitchyardWebhook(key, taskId, ts, sig.slice(0, -4) + "AAA=")).toBe(false); // tampered
    expect(await verifySwitchyardWebhook(key, taskId, ts, null)).toBe(false);
    const old = String(Math.floor(Date.now() / 1000) - 301);
    const oldSig = createHmac("sha256", key).update(`${taskId}.${old}`).digest("base64");
    expect(await verifySwitchyardWebhook(key, taskId, old, oldSig)).toBe(false); // outside the 5-minute tolerance
    expect(await verifySwitchyardWebhook(key, taskId, old, oldSig, (Number(old) + 10) * 1000)).toBe(true);
    // The gateway's own signer (for the media callback worker) agrees with both.
    const headers = signCallback(key, taskId, Number(ts));
    expect(headers["X-Webhook-Signature"]).toBe(sig);
    expect(
      await verifySwitchyardWebhook(key, taskId, headers["X-Webhook-Timestamp"], headers["X-Webhook-Signature"]),
    ).toBe(true);
    expect(verifyCallback(key, taskId, ts, sig)).toBe(true);
    expect(verifyCallback(key, taskId, old, oldSig)).toBe(false);
  });
});

describe("/docs", () => {
  test("an HTML reference of every documented operation that loads nothing from another host", async () => {
    const r = await fetch(gw.url + "/docs");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("text/html");
    const page = await r.text();
    const doc: any = await (await fetch(gw.url + "/openapi.json")).json();
    for (const [path, item] of Object.entries<any>(doc.paths))
      for (const method of Object.keys(item))
        expect(page).toContain(`${method.toUpperCase()} ${path.replaceAll("&", "&amp;")}`);
    // Every fetched resource (src=, href= of link tags, CSS url(), @import) is local.
    const refs = [...page.matchAll(/\s(?:src|href)\s*=\s*["']([^"']*)["']/gi)].map((m) => m[1]!);
    refs.push(
      ...[...page.matchAll(/url\(\s*["']?([^"')]+)/gi)].map((m) => m[1]!),
      ...[...page.matchAll(/@import\s+["']([^"']+)/gi)].map((m) => m[1]!),
    );
    expect(refs.length).toBeGreaterThan(10);
    const external = refs.filter((u) => /^(https?:)?\/\//i.test(u) && !u.startsWith(BASE + "/")); // PUBLIC_BASE_URL is this host
    expect(external).toEqual([]);
    expect(page).not.toMatch(/<script[^>]+src=/i);
  });
});

describe("/docs reads as a reference", () => {
  let page: string;
  beforeAll(async () => {
    page = await (await fetch(gw.url + "/docs")).text();
  });
  const section = (id: string) => {
    const start = page.indexOf(`id="${id}"`);
    expect(start).toBeGreaterThan(0);
    return page.slice(start, page.indexOf("</section>", start));
  };

  test("descriptions are rendered Markdown: code spans become <code>, no backtick is left outside code blocks", () => {
    const outsidePre = page.replace(/<pre>[\s\S]*?<\/pre>/g, "");
    expect(outsidePre).not.toContain("`");
    expect(page).toContain("<code>insufficient_credits</code>");
    expect(page).toContain("<code>Authorization: Bearer &lt;key&gt;</code>");
  });

  test("each operation shows its request and response schemas (the LLM call's stream events too; the task's per media type)", () => {
    const messages = section("op-postv1messages");
    for (const s of [
      "Request body",
      "<code>max_tokens</code>",
      "<code>max_credits</code>",
      "Response",
      "<code>usage.input_tokens</code>",
      "Stream events",
      "<code>content_block</code>",
      "<code>max_credits_exceeded</code>",
    ])
      expect(messages).toContain(s);
    const task = section("op-postapiv1jobscreatetask");
    for (const s of [
      "CreateImageTask",
      "CreateVideoTask",
      "CreateAudioTask",
      "<code>input.prompt</code>",
      "<code>data.taskId</code>",
    ])
      expect(task).toContain(s);
    expect(section("op-getv1credits")).toContain("<code>held_credits</code>");
  });

  test("a first call per protocol, with curl and an SDK, against PUBLIC_BASE_URL", () => {
    for (const [id, curl, sdk] of [
      ["first-anthropic-messages", `curl -s ${BASE}/v1/messages`, "new Anthropic({ baseURL: &quot;" + BASE + "&quot;"],
      ["first-openai-responses", `curl -s ${BASE}/v1/responses`, "client.responses.create"],
      ["first-openai-chat-completions", `curl -s ${BASE}/v1/chat/completions`, "client.chat.completions.create"],
      ["first-embeddings", `curl -s ${BASE}/v1/embeddings`, "client.embeddings.create"],
      ["first-media-tasks", `curl -s ${BASE}/api/v1/jobs/createTask`, "recordInfo?taskId="],
    ]) {
      const s = section(id!);
      expect(s).toContain(curl!);
      expect(s).toContain(sdk!);
    }
  });
});

test("/docs renders Markdown in descriptions, and raw HTML in one as text", () => {
  const doc = {
    info: { title: "T", version: "1", description: "Use **bold**, `code` and <script>alert(1)</script>." },
    servers: [{ url: "https://gw.example.com" }],
    paths: {
      "/x": {
        get: {
          summary: "Read `x`",
          description: "- one\n- two <img src=x onerror=alert(1)>",
          responses: { "200": { description: "Fine `ok`." } },
        },
      },
    },
    components: { schemas: {} },
  };
  const page = renderDocsPage(doc);
  expect(page).toContain("<strong>bold</strong>");
  expect(page).toContain("<code>code</code>");
  expect(page).toContain("Read <code>x</code>");
  expect(page).toContain("<li>one</li>");
  expect(page).not.toContain("<script>alert");
  expect(page).not.toContain("<img src=x");
  expect(page).toContain("&lt;script&gt;");
});
