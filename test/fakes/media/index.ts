// All fake media upstreams on one Bun.serve (port 0), each under its own prefix, so a test points the gateway's
// *_BASE_URL settings at them:
//
//   const up = startFakeMediaUpstreams();
//   process.env = { ...process.env, ...up.env };        // KIE_BASE_URL, FAL_BASE_URL, ... and the matching keys
//   up.control.set({ polls: 2 }, { provider: "fal" });  // see control.ts for every knob
//   ...; expect(up.requests.filter((r) => r.provider === "kie")).toHaveLength(3);
//   await up.stop();
import { Control, type RecordedRequest } from "./control";
import { falHandler } from "./fal";
import { FileStore } from "./files";
import { readBody, type Handler } from "./http";
import { kieHandler } from "./kie";
import { openaiImagesHandler } from "./openai-images";
import { replicateHandler } from "./replicate";
import { veoHandler } from "./veo";

export type { Behavior, FakeTask, Phase, Provider, RecordedCallback, RecordedRequest } from "./control";
export { Control } from "./control";
export { mp3Bytes, mp4Bytes, mp4DurationSeconds, pngBytes } from "./files";

export interface FakeKeys {
  kie: string;
  fal: string;
  replicate: string;
  openai: string;
  veo: string;
}

export interface FakeMediaUpstreams {
  /** Origin of the server, e.g. http://127.0.0.1:41234. */
  url: string;
  /** Base URLs as each protocol's clients expect them (the real ones: api.kie.ai, queue.fal.run, ...). */
  urls: { kie: string; fal: string; replicate: string; openai: string; veo: string };
  keys: FakeKeys;
  /** Environment for the gateway: the variable names, pointed at the fakes. */
  env: Record<string, string>;
  /** Every request received, in order (files included). */
  requests: RecordedRequest[];
  control: Control;
  stop(): Promise<void>;
}

const DEFAULT_KEYS: FakeKeys = {
  kie: "kie-test-key",
  fal: "fal-test-key",
  replicate: "r8_test_token",
  openai: "sk-test-openai",
  veo: "veo-test-key",
};

export function startFakeMediaUpstreams(
  options: { keys?: Partial<FakeKeys>; preferWaitCapMs?: number } = {},
): FakeMediaUpstreams {
  const keys = { ...DEFAULT_KEYS, ...options.keys };
  const control = new Control();
  const files = new FileStore();
  const requests: RecordedRequest[] = [];
  const routes = routesOf(keys, options.preferWaitCapMs);
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0, // a `never` OpenAI request stays open until the client gives up
    async fetch(req) {
      const url = new URL(req.url);
      const [, prefix = "", ...rest] = url.pathname.split("/");
      const route = routes[prefix];
      const body = req.method === "GET" || req.method === "HEAD" ? undefined : await readBody(req);
      const path = "/" + rest.join("/");
      const provider = route?.provider ?? "unknown";
      // kie's Suno API shares kie's base; record it under its own name so tests can tell them apart.
      const name = provider === "kie" && path.startsWith("/api/v1/generate") ? "kie-suno" : provider;
      requests.push({
        provider: name,
        method: req.method,
        path: path + url.search,
        headers: Object.fromEntries(req.headers),
        body,
      });
      if (!route) return new Response("no such fake upstream", { status: 404 });
      return route.handler(req, path, body, { control, files, key: route.key, base: `${url.origin}/${prefix}` });
    },
  });
  const origin = `http://127.0.0.1:${server.port}`;
  const urls = {
    kie: `${origin}/kie`,
    fal: `${origin}/fal`,
    replicate: `${origin}/replicate/v1`,
    openai: `${origin}/openai/v1`,
    veo: `${origin}/veo`,
  };
  return {
    url: origin,
    urls,
    keys,
    env: envOf(keys, urls),
    requests,
    control,
    async stop() {
      control.stop();
      await server.stop(true);
    },
  };
}

type Route = { provider: string; key: string; handler: Handler };

/** The fakes by the first segment of their path, each with the key it expects. */
function routesOf(keys: FakeKeys, preferWaitCapMs: number | undefined): Record<string, Route> {
  return {
    kie: { provider: "kie", key: keys.kie, handler: kieHandler },
    fal: { provider: "fal", key: keys.fal, handler: falHandler },
    replicate: { provider: "replicate", key: keys.replicate, handler: replicateHandler(preferWaitCapMs) },
    openai: { provider: "openai-images", key: keys.openai, handler: openaiImagesHandler },
    veo: { provider: "veo", key: keys.veo, handler: veoHandler },
    // A storage host that serves result files to anyone with the URL (where Veo's downloads redirect).
    cdn: {
      provider: "cdn",
      key: "",
      handler: (_req, path, _body, ctx) =>
        (path.startsWith("/files/") && ctx.files.response(path.slice(7))) || new Response("not found", { status: 404 }),
    },
  };
}

/** What a gateway is configured with to use these fakes. */
function envOf(keys: FakeKeys, urls: Record<"kie" | "fal" | "replicate" | "openai" | "veo", string>) {
  return {
    KIE_API_KEY: keys.kie,
    KIE_BASE_URL: urls.kie,
    FAL_KEY: keys.fal,
    FAL_BASE_URL: urls.fal,
    REPLICATE_API_TOKEN: keys.replicate,
    REPLICATE_BASE_URL: urls.replicate,
    OPENAI_API_KEY: keys.openai,
    OPENAI_BASE_URL: urls.openai,
    GEMINI_API_KEY: keys.veo,
    GEMINI_BASE_URL: urls.veo,
    // The fakes (and the result files they hand out) live on 127.0.0.1: the gateway must be told to fetch there.
    UPSTREAM_URLS_ALLOW_PRIVATE: "true",
  };
}
