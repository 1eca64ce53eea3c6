// Fake Gemini API for Veo (base https://generativelanguage.googleapis.com), faithful to media-upstreams.md:
// POST /v1beta/models/{model}:predictLongRunning with `x-goog-api-key` (or ?key=), body {instances:[{prompt, image?}],
// parameters:{aspectRatio, resolution, durationSeconds, negativePrompt}} → {name: "models/{model}/operations/{id}"};
// GET /v1beta/{name} → the operation; like every Google long-running operation, `done` is ABSENT (not false) while it
// runs; success: response.generateVideoResponse.generatedSamples[0].video.uri, a download that needs the key too;
// failure: error{code, message} (code a google.rpc code, 13 INTERNAL by default).
import type { FakeTask } from "./control";
import { isObject, json, newId, produce, type FakeContext, type Handler } from "./http";

const STATUS: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  503: "UNAVAILABLE",
};
const gerror = (code: number, message: string) =>
  json({ error: { code, message, status: STATUS[code] ?? "UNKNOWN" } }, code);

export const veoHandler: Handler = (req, path, body, ctx) => {
  const url = new URL(req.url);
  const key = req.headers.get("x-goog-api-key") ?? url.searchParams.get("key");
  if (key !== ctx.key) return gerror(401, "API key not valid. Please pass a valid API key.");
  const file = /^\/v1beta\/files\/([^/:]+):download$/.exec(path);
  if (req.method === "GET" && file) {
    const owner = [...ctx.control.tasks.values()].find((t) => t.files?.includes(file[1]!));
    if (owner?.behavior.fileRedirect) {
      return new Response(null, {
        status: 302,
        headers: { location: `${url.protocol}//localhost:${url.port}/cdn/files/${file[1]}.mp4` },
      });
    }
    return ctx.files.response(file[1]!) ?? gerror(404, "File not found");
  }
  const submit = /^\/v1beta\/models\/([^/:]+):predictLongRunning$/.exec(path);
  if (req.method === "POST" && submit) return predict(submit[1]!, body, ctx);
  const op = /^\/v1beta\/models\/([^/]+)\/operations\/([^/]+)$/.exec(path);
  if (req.method === "GET" && op) {
    const t = ctx.control.tasks.get(op[2]!);
    if (t?.provider !== "veo" || t.model !== op[1]) return gerror(404, `Operation not found: ${path.slice(8)}`);
    return json(operation(t, ctx));
  }
  return gerror(404, `Not found: ${req.method} ${path}`);
};

function predict(model: string, body: unknown, ctx: FakeContext): Response {
  const instance = isObject(body) && Array.isArray(body.instances) ? body.instances[0] : undefined;
  if (!isObject(instance) || typeof instance.prompt !== "string" || !instance.prompt) {
    return gerror(400, "Invalid JSON payload: instances[0].prompt is required.");
  }
  const parameters = isObject(body) && isObject(body.parameters) ? body.parameters : {};
  const behavior = ctx.control.behaviorFor("veo", model);
  if (behavior.refuse) {
    const r = behavior.refuse;
    return gerror(
      r.status ?? (typeof r.code === "number" ? r.code : 429),
      r.message ?? "Resource has been exhausted (e.g. check quota).",
    );
  }
  const t = ctx.control.add({
    id: newId(),
    provider: "veo",
    model,
    input: { ...instance, ...parameters },
    body,
    behavior,
  });
  return json({ name: `models/${model}/operations/${t.id}` });
}

function operation(t: FakeTask, ctx: FakeContext) {
  const name = `models/${t.model}/operations/${t.id}`;
  const phase = ctx.control.poll(t);
  if (phase === "queued" || phase === "running") return { name };
  if (phase !== "succeeded") {
    const f = t.behavior.fail;
    return {
      name,
      done: true,
      error: { code: typeof f?.code === "number" ? f.code : 13, message: f?.message ?? "Video generation failed." },
    };
  }
  const { ids } = produce(ctx, t, t.input, { seconds: 8 });
  const cdn = ctx.base.replace(/\/\/127\.0\.0\.1:(\d+)\/veo$/, "//localhost:$1/cdn");
  const uri = (id: string) =>
    t.behavior.fileElsewhere ? `${cdn}/files/${id}.mp4` : `${ctx.base}/v1beta/files/${id}:download?alt=media`;
  return {
    name,
    done: true,
    response: {
      "@type": "type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse",
      generateVideoResponse: { generatedSamples: ids.map((id) => ({ video: { uri: uri(id) } })) },
    },
  };
}
