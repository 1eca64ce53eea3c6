// Fake fal.ai queue (base https://queue.fal.run), faithful to media-upstreams.md:
// `Authorization: Key <key>`; submit POST /{model_id} → {request_id, response_url, status_url, cancel_url};
// status GET /{app}/requests/{id}/status → IN_QUEUE (202, queue_position) / IN_PROGRESS (202) / COMPLETED (200, metrics;
// on failure also error + error_type); result GET /{app}/requests/{id} → the output, 400 while not complete, the
// failure's status code with {"detail":[...]} and X-Fal-Retryable when it failed; cancel PUT .../cancel.
// {app} is the first two segments of the model id (fal-ai/kling-video), as real fal does: follow the returned URLs.
import type { FakeTask } from "./control";
import { isObject, json, newId, produce, type FakeContext, type Handler } from "./http";

const detail = (msg: string, type: string, status: number, headers: Record<string, string> = {}) =>
  json({ detail: [{ loc: ["body"], msg, type }] }, status, { "x-fal-retryable": String(status >= 500), ...headers });

export const falHandler: Handler = (req, path, body, ctx) => {
  if (path.startsWith("/files/"))
    return ctx.files.response(path.slice(7)) ?? new Response("not found", { status: 404 });
  if (req.headers.get("authorization") !== `Key ${ctx.key}`)
    return json({ detail: "Invalid or missing credentials" }, 401);
  const m = /^\/([^/]+\/[^/]+)\/requests\/([^/]+)(\/status|\/cancel)?$/.exec(path);
  if (m) {
    const [, app, id, tail] = m;
    const t = ctx.control.tasks.get(id!);
    if (t?.provider !== "fal" || appOf(t.model) !== app) return json({ detail: "Request not found" }, 404);
    if (req.method === "GET" && tail === "/status")
      return status(t, ctx, new URL(req.url).searchParams.get("logs") === "1");
    if (req.method === "GET" && !tail) return result(t, ctx);
    if (req.method === "PUT" && tail === "/cancel") return cancel(t, ctx);
    return json({ detail: "Method not allowed" }, 405);
  }
  if (req.method === "POST") return submit(path.slice(1), body, ctx);
  return json({ detail: "Not found" }, 404);
};

const appOf = (model: string) => model.split("/").slice(0, 2).join("/");
const requestUrl = (ctx: FakeContext, t: FakeTask) => `${ctx.base}/${appOf(t.model)}/requests/${t.id}`;

function submit(model: string, body: unknown, ctx: FakeContext): Response {
  if (model.split("/").length < 2) return json({ detail: "Application not found" }, 404);
  if (!isObject(body)) return detail("Input should be a valid dictionary", "dict_type", 422);
  const behavior = ctx.control.behaviorFor("fal", model);
  if (behavior.refuse) {
    const r = behavior.refuse;
    return detail(
      r.message ?? "Invalid input",
      typeof r.code === "string" ? r.code : "value_error",
      r.status ?? (typeof r.code === "number" ? r.code : 422),
    );
  }
  const t = ctx.control.add({ id: newId(), provider: "fal", model, input: body, body, behavior });
  const url = requestUrl(ctx, t);
  return json({
    request_id: t.id,
    response_url: url,
    status_url: `${url}/status`,
    cancel_url: `${url}/cancel`,
    queue_position: 0,
  });
}

function status(t: FakeTask, ctx: FakeContext, logs: boolean): Response {
  const phase = ctx.control.poll(t);
  const base = { request_id: t.id, response_url: requestUrl(ctx, t), ...(logs ? { logs: [] } : {}) };
  if (phase === "queued") return json({ ...base, status: "IN_QUEUE", queue_position: 0 }, 202);
  if (phase === "running") return json({ ...base, status: "IN_PROGRESS" }, 202);
  const metrics = { inference_time: ((t.finishedAt ?? Date.now()) - t.createdAt) / 1000 };
  if (phase === "succeeded") return json({ ...base, status: "COMPLETED", metrics });
  const [error, type] = failure(t);
  return json({ ...base, status: "COMPLETED", metrics, error, error_type: type });
}

function failure(t: FakeTask): [string, string] {
  if (t.canceled) return ["Request was cancelled", "request_cancelled"];
  const f = t.behavior.fail;
  return [f?.message ?? "Internal server error", typeof f?.code === "string" ? f.code : "internal_server_error"];
}

function result(t: FakeTask, ctx: FakeContext): Response {
  const phase = ctx.control.peek(t);
  if (phase === "queued" || phase === "running") return json({ detail: "Request is still in progress" }, 400);
  if (phase !== "succeeded") {
    const [msg, type] = failure(t);
    const code =
      type === "content_policy_violation" || type === "request_cancelled"
        ? 422
        : typeof t.behavior.fail?.code === "number"
          ? t.behavior.fail.code
          : 500;
    return detail(msg, type, code, { "x-fal-error-type": type });
  }
  const { kind, ids } = produce(ctx, t, t.input);
  const file = (id: string, ext: string, type: string, name: string) => ({
    url: `${ctx.base}/files/${id}.${ext}`,
    content_type: type,
    file_name: name,
    file_size: ctx.files.size(id),
  });
  if (kind === "image") {
    return json({
      images: ids.map((id) => ({ url: `${ctx.base}/files/${id}.png`, width: 1, height: 1, content_type: "image/png" })),
      seed: 42,
      has_nsfw_concepts: ids.map(() => false),
      prompt: t.input.prompt ?? "",
    });
  }
  if (kind === "video") return json({ video: file(ids[0]!, "mp4", "video/mp4", "output.mp4") });
  return json({ audio: file(ids[0]!, "mp3", "audio/mpeg", "output.mp3") });
}

function cancel(t: FakeTask, ctx: FakeContext): Response {
  const phase = ctx.control.peek(t);
  if (phase === "succeeded" || phase === "failed" || phase === "canceled")
    return json({ status: "ALREADY_COMPLETED" }, 400);
  t.canceled = true;
  return json({ status: "CANCELLATION_REQUESTED" }, 202);
}
