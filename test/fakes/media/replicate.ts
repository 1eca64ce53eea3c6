// Fake Replicate predictions API (base https://api.replicate.com/v1), faithful to media-upstreams.md:
// `Authorization: Bearer <token>`; POST /models/{owner}/{name}/predictions {input, webhook?, webhook_events_filter?}
// → 201 prediction; GET /predictions/{id}; POST /predictions/{id}/cancel. Status starting → processing → succeeded |
// failed | canceled; output is a URL, or an array of URLs for models that take num_outputs. `Prefer: wait` blocks
// until the prediction is final (poll-based behaviours resolve at once; `never` waits at most `preferWaitCapMs`).
// A `webhook` receives the final prediction.
import type { FakeTask, Phase } from "./control";
import { isObject, json, newId, produce, sleep, type FakeContext, type Handler } from "./http";

const problem = (status: number, title: string, detail: string) =>
  json({ title, detail, status }, status, { "content-type": "application/problem+json" });

export function replicateHandler(preferWaitCapMs = 2000): Handler {
  return async (req, path, body, ctx) => {
    if (path.startsWith("/files/"))
      return ctx.files.response(path.slice(7)) ?? new Response("not found", { status: 404 });
    if (req.headers.get("authorization") !== `Bearer ${ctx.key}`) {
      return problem(401, "Unauthenticated", "You did not pass a valid authentication token");
    }
    const create = /^\/v1\/models\/([^/]+\/[^/]+)\/predictions$/.exec(path);
    if (req.method === "POST" && create) return submit(req, create[1]!, body, ctx, preferWaitCapMs);
    const one = /^\/v1\/predictions\/([^/]+)(\/cancel)?$/.exec(path);
    const t = one ? ctx.control.tasks.get(one[1]!) : undefined;
    if (one && t?.provider !== "replicate")
      return problem(404, "Not found", "The requested resource could not be found.");
    if (t && req.method === "GET" && !one![2]) return json(prediction(t, ctx, ctx.control.poll(t)));
    if (t && req.method === "POST" && one![2]) {
      const p = ctx.control.peek(t);
      if (p === "queued" || p === "running") t.canceled = true;
      return json(prediction(t, ctx, ctx.control.peek(t)));
    }
    return problem(404, "Not found", `${req.method} ${path}`);
  };
}

async function submit(req: Request, model: string, body: unknown, ctx: FakeContext, capMs: number): Promise<Response> {
  if (!isObject(body) || !isObject(body.input)) {
    return json(
      {
        title: "Input validation failed",
        detail: "- input: is required",
        status: 422,
        invalid_fields: [{ type: "required", field: "input" }],
      },
      422,
    );
  }
  const behavior = ctx.control.behaviorFor("replicate", model);
  if (behavior.refuse) {
    const r = behavior.refuse;
    const status = r.status ?? (typeof r.code === "number" ? r.code : 422);
    return problem(
      status,
      status === 429 ? "Too Many Requests" : status === 402 ? "Insufficient credit" : "Invalid input",
      r.message ?? "Prediction refused",
    );
  }
  const t = ctx.control.add({
    id: newId().slice(0, 26),
    provider: "replicate",
    model,
    input: body.input,
    body,
    behavior,
  });
  if (typeof body.webhook === "string") {
    const hook = body.webhook;
    t.notify = (task) =>
      void ctx.control.post(
        hook,
        prediction(task, ctx, task.canceled ? "canceled" : task.behavior.fail ? "failed" : "succeeded"),
      );
  }
  const wait = /^wait(?:=(\d+))?$/.exec(req.headers.get("prefer") ?? "");
  if (wait) {
    const limit = Math.min(Number(wait[1] ?? 60), 60) * 1000;
    if (!behavior.never && behavior.delayMs === undefined) t.polls = behavior.polls ?? 1; // as if polled to the end
    const until = Date.now() + Math.min(limit, behavior.never ? capMs : limit);
    while (Date.now() < until && ["queued", "running"].includes(ctx.control.peek(t))) await sleep(10);
  }
  return json(prediction(t, ctx, ctx.control.peek(t)), 201);
}

function prediction(t: FakeTask, ctx: FakeContext, phase: Phase) {
  const status = {
    queued: "starting",
    running: "processing",
    succeeded: "succeeded",
    failed: "failed",
    canceled: "canceled",
  }[phase];
  const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
  let output: string | string[] | null = null;
  if (phase === "succeeded") {
    const { kind, ids } = produce(ctx, t, t.input);
    const urls = ids.map((id) => `${ctx.base}/files/${id}.${{ image: "png", video: "mp4", audio: "mp3" }[kind]}`);
    output = kind === "image" && (t.input.num_outputs !== undefined || urls.length > 1) ? urls : urls[0]!;
  }
  const done = phase === "succeeded" || phase === "failed" || phase === "canceled";
  const api = ctx.base.replace(/\/$/, "");
  return {
    id: t.id,
    model: t.model,
    version: "fake-version",
    input: t.input,
    logs: "",
    output,
    data_removed: false,
    error: phase === "failed" ? (t.behavior.fail?.message ?? "Prediction failed") : null,
    status,
    created_at: iso(t.createdAt),
    started_at: phase === "queued" ? null : iso(t.createdAt),
    completed_at: done ? iso(t.finishedAt ?? Date.now()) : null,
    urls: { get: `${api}/v1/predictions/${t.id}`, cancel: `${api}/v1/predictions/${t.id}/cancel` },
    metrics: done ? { predict_time: ((t.finishedAt ?? Date.now()) - t.createdAt) / 1000 } : {},
  };
}
