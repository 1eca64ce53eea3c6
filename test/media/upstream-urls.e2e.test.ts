// URLs an upstream hands over (result files, fal's status and response URLs) are fetched like callbacks are sent:
// resolved once and pinned, private addresses refused unless UPSTREAM_URLS_ALLOW_PRIVATE allows them, redirects
// followed by hand (a few at most), and the provider's credentials never carried to another origin. The fakes run on
// 127.0.0.1, so their env allows private addresses; the strict gateway here turns that off.
import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { guardedFetch, UpstreamUrlRefused } from "../../src/media/upstream-fetch";
import { client, ledgerOf, startMediaGateway } from "./support";

const strict = await startMediaGateway({ UPSTREAM_URLS_ALLOW_PRIVATE: "false" });
const open = await startMediaGateway();
afterAll(async () => {
  await strict.stop();
  await open.stop();
});
beforeEach(() => {
  strict.up.control.reset();
  open.up.control.reset();
});

describe("upstream-supplied URLs", () => {
  test("a result file on a private address is not fetched when not allowed: the task fails, refunded", async () => {
    const { key } = await strict.account(1000);
    const c = client(strict, key);
    const { json } = await c.createTask("z-image", { prompt: "x" });
    const rec = await c.waitRecord(json.data.taskId);
    expect(rec).toMatchObject({ state: "fail", failCode: "result_url_refused", creditsConsumed: 0 });
    expect(rec.failMsg).not.toContain("127.0.0.1");
    expect(strict.up.requests.filter((r) => r.path.startsWith("/files/"))).toEqual([]);
    expect((await ledgerOf(strict, json.data.taskId)).hold.status).toBe("voided");
  });

  test("fal's status URL on a private address is not polled (with fal's key) when not allowed: the task fails, refunded", async () => {
    const { key } = await strict.account(1000);
    const c = client(strict, key);
    const { json } = await c.createTask("fal-ai/kling-image/o1", { prompt: "x" });
    const rec = await c.waitRecord(json.data.taskId);
    expect(rec).toMatchObject({ state: "fail", failCode: "result_url_refused", creditsConsumed: 0 });
    expect(strict.up.requests.filter((r) => r.provider === "fal" && r.method === "GET")).toEqual([]);
  });

  test("a Veo result that redirects to another origin is downloaded there without the Gemini key", async () => {
    const { key } = await open.account(5000);
    const c = client(open, key);
    open.up.control.set({ fileRedirect: true }, { provider: "veo" });
    const from = open.up.requests.length;
    const { json } = await c.createTask("veo-3.1-fast-generate-preview", { prompt: "x", duration: 4 });
    const rec = await c.waitRecord(json.data.taskId);
    expect(rec.state).toBe("success");
    const download = open.up.requests.slice(from).find((r) => r.provider === "cdn");
    expect(download).toBeDefined();
    expect(download!.headers["x-goog-api-key"]).toBeUndefined();
    expect(download!.headers.authorization).toBeUndefined();
    // The first hop, on Veo's own origin, did carry the key.
    expect(
      open.up.requests.slice(from).find((r) => r.provider === "veo" && r.path.includes(":download"))!.headers[
        "x-goog-api-key"
      ],
    ).toBe(open.up.keys.veo);
  });

  test("a Veo result named on another origin is downloaded without the Gemini key", async () => {
    const { key } = await open.account(5000);
    const c = client(open, key);
    open.up.control.set({ fileElsewhere: true }, { provider: "veo" });
    const from = open.up.requests.length;
    const { json } = await c.createTask("veo-3.1-fast-generate-preview", { prompt: "x", duration: 4 });
    expect((await c.waitRecord(json.data.taskId)).state).toBe("success");
    const download = open.up.requests.slice(from).find((r) => r.provider === "cdn");
    expect(download).toBeDefined();
    expect(download!.headers["x-goog-api-key"]).toBeUndefined();
  });

  test("a URL that does not parse, or a redirect to one, is refused for good (its task fails at once, not at its deadline)", async () => {
    await expect(guardedFetch("not a url", {}, { allowPrivate: true })).rejects.toBeInstanceOf(UpstreamUrlRefused);
    const bad = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: () => new Response(null, { status: 302, headers: { location: "http://[::1" } }),
    });
    try {
      await expect(
        guardedFetch(`http://127.0.0.1:${bad.port}/start`, {}, { allowPrivate: true }),
      ).rejects.toBeInstanceOf(UpstreamUrlRefused);
    } finally {
      bad.stop(true);
    }
  });

  test("redirects are followed a few times at most", async () => {
    let hits = 0;
    const loop = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: () => (hits++, new Response(null, { status: 302, headers: { location: "/again" } })),
    });
    try {
      await expect(guardedFetch(`http://127.0.0.1:${loop.port}/start`, {}, { allowPrivate: true })).rejects.toThrow(
        /redirect/,
      );
      expect(hits).toBe(6); // the first request and 5 redirects
    } finally {
      loop.stop(true);
    }
  });
});
