// Fake kie.ai: the Market job API (createTask / recordInfo) and the Suno API (generate / record-info).
// Faithful to media-upstreams.md: `Authorization: Bearer <key>`; errors come back as HTTP 200 with the real code in
// the `{code, msg, data}` envelope (so does a bad key: code 401); an unknown taskId is code 422 "recordInfo is null";
// Market states waiting → queuing → generating → success | fail with resultJson as a JSON *string*; Suno statuses
// PENDING → TEXT_SUCCESS → FIRST_SUCCESS → SUCCESS, failures CREATE_TASK_FAILED / GENERATE_AUDIO_FAILED /
// SENSITIVE_WORD_ERROR. Results are public file URLs under {base}/files/. When a task has a callBackUrl the final
// record is POSTed there (Market: {code, msg, data: record}; Suno: the "complete"/"error" callback).
import type { FakeTask, Phase } from "./control";
import { isObject, json, newId, produce, type FakeContext, type Handler } from "./http";

const envelope = (code: number, msg: string, data: unknown = null, status = 200) => json({ code, msg, data }, status);
const SUNO_MODELS = ["V4", "V4_5", "V4_5PLUS", "V4_5ALL", "V5"];
const SUNO_FAILURES = ["CREATE_TASK_FAILED", "GENERATE_AUDIO_FAILED", "SENSITIVE_WORD_ERROR", "CALLBACK_EXCEPTION"];

export const kieHandler: Handler = (req, path, body, ctx) => {
  if (path.startsWith("/files/"))
    return ctx.files.response(path.slice(7)) ?? new Response("not found", { status: 404 });
  if (req.headers.get("authorization") !== `Bearer ${ctx.key}`)
    return envelope(401, "You do not have access permissions");
  const url = new URL(req.url);
  if (req.method === "POST" && path === "/api/v1/jobs/createTask") return createTask(body, ctx);
  if (req.method === "GET" && path === "/api/v1/jobs/recordInfo")
    return recordInfo(url.searchParams.get("taskId"), ctx);
  if (req.method === "POST" && path === "/api/v1/generate") return sunoGenerate(body, ctx);
  if (req.method === "GET" && path === "/api/v1/generate/record-info")
    return sunoRecord(url.searchParams.get("taskId"), ctx);
  return envelope(404, `Not found: ${req.method} ${path}`);
};

function refusal(t: { refuse?: { status?: number; code?: number | string; message?: string } }): Response | undefined {
  const r = t.refuse;
  if (!r) return undefined;
  return envelope(
    typeof r.code === "number" ? r.code : 500,
    r.message ?? "Server exception, please try again later",
    null,
    r.status ?? 200,
  );
}

// ---------- Market ----------

async function createTask(body: unknown, ctx: FakeContext): Promise<Response> {
  if (!isObject(body)) return envelope(422, "Request body must be JSON");
  if (typeof body.model !== "string" || !body.model) return envelope(422, "model is required");
  if (!isObject(body.input)) return envelope(422, "input is required");
  const behavior = ctx.control.behaviorFor("kie", body.model);
  const refused = refusal(behavior);
  if (refused) return refused;
  const t = ctx.control.add({ id: newId(), provider: "kie", model: body.model, input: body.input, body, behavior });
  if (typeof body.callBackUrl === "string") {
    t.notify = (task) => {
      const rec = marketRecord(task, ctx, task.behavior.fail ? "failed" : "succeeded");
      void ctx.control.post(body.callBackUrl as string, {
        code: rec.state === "success" ? 200 : 501,
        msg: rec.state === "success" ? "success" : rec.failMsg,
        data: rec,
      });
    };
  }
  await behavior.onAccepted?.(t);
  return envelope(200, "success", { taskId: t.id });
}

function recordInfo(taskId: string | null, ctx: FakeContext): Response {
  if (!taskId) return envelope(422, "taskId is required");
  const t = ctx.control.tasks.get(taskId);
  if (t?.provider !== "kie") return envelope(422, "recordInfo is null");
  return envelope(200, "success", marketRecord(t, ctx, ctx.control.poll(t)));
}

function marketRecord(t: FakeTask, ctx: FakeContext, phase: Phase) {
  const done = phase === "succeeded" || phase === "failed";
  const state =
    phase === "succeeded"
      ? "success"
      : phase === "failed"
        ? "fail"
        : t.polls <= 1
          ? "waiting"
          : t.polls === 2
            ? "queuing"
            : "generating";
  const urls = phase === "succeeded" ? produce(ctx, t, t.input).ids.map((id) => fileUrl(ctx, t, id)) : [];
  const fail = t.behavior.fail;
  return {
    taskId: t.id,
    model: t.model,
    state,
    param: JSON.stringify(t.body),
    resultJson: phase === "succeeded" ? JSON.stringify({ resultUrls: urls }) : "",
    failCode: phase === "failed" ? String(fail?.code ?? "500") : "",
    failMsg: phase === "failed" ? (fail?.message ?? "Generation failed") : "",
    costTime: done ? t.finishedAt! - t.createdAt : 0,
    completeTime: done ? t.finishedAt! : null,
    createTime: t.createdAt,
    updateTime: Date.now(),
    creditsConsumed: t.behavior.creditsConsumed ?? null,
  };
}

function fileUrl(ctx: FakeContext, t: FakeTask, id: string): string {
  return `${ctx.base}/files/${id}.${{ image: "png", video: "mp4", audio: "mp3" }[ctx.control.outputOf(t)]}`;
}

// ---------- Suno ----------

function sunoGenerate(body: unknown, ctx: FakeContext): Response {
  if (!isObject(body)) return envelope(422, "Request body must be JSON");
  const { model, customMode, instrumental, prompt, style, title, callBackUrl } = body;
  if (typeof model !== "string" || !SUNO_MODELS.includes(model))
    return envelope(422, `model must be one of ${SUNO_MODELS.join(", ")}`);
  if (typeof callBackUrl !== "string" || !callBackUrl) return envelope(422, "callBackUrl is required");
  if (typeof customMode !== "boolean" || typeof instrumental !== "boolean")
    return envelope(422, "customMode and instrumental are required");
  if (customMode && (!style || !title)) return envelope(422, "style and title are required in custom mode");
  if (customMode && !instrumental && !prompt)
    return envelope(422, "prompt (lyrics) is required in custom mode unless instrumental");
  if (!customMode && !prompt) return envelope(422, "prompt is required");
  const behavior = ctx.control.behaviorFor("kie-suno", model);
  const refused = refusal(behavior);
  if (refused) return refused;
  const t = ctx.control.add({ id: newId(), provider: "kie-suno", model, input: body, body, behavior });
  t.notify = (task) => {
    const ok = !task.behavior.fail;
    const tracks = ok ? sunoTracks(task, ctx) : [];
    const data = tracks.map((s) => ({
      id: s.id,
      audio_url: s.audioUrl,
      source_audio_url: s.sourceAudioUrl,
      stream_audio_url: s.streamAudioUrl,
      image_url: s.imageUrl,
      prompt: s.prompt,
      model_name: s.modelName,
      title: s.title,
      tags: s.tags,
      createTime: s.createTime,
      duration: s.duration,
    }));
    const msg = ok ? "All generated successfully." : (task.behavior.fail?.message ?? "Audio generation failed");
    void ctx.control.post(callBackUrl, {
      code: ok ? 200 : 501,
      msg,
      data: { callbackType: ok ? "complete" : "error", task_id: task.id, data },
    });
  };
  return envelope(200, "success", { taskId: t.id });
}

function sunoRecord(taskId: string | null, ctx: FakeContext): Response {
  if (!taskId) return envelope(422, "taskId is required");
  const t = ctx.control.tasks.get(taskId);
  if (t?.provider !== "kie-suno") return envelope(422, "recordInfo is null");
  const phase = ctx.control.poll(t);
  const fail = t.behavior.fail;
  const failStatus =
    typeof fail?.code === "string" && SUNO_FAILURES.includes(fail.code) ? fail.code : "GENERATE_AUDIO_FAILED";
  const status =
    phase === "succeeded"
      ? "SUCCESS"
      : phase === "failed"
        ? failStatus
        : t.polls <= 1
          ? "PENDING"
          : t.polls === 2
            ? "TEXT_SUCCESS"
            : "FIRST_SUCCESS";
  const working = phase === "queued" || phase === "running";
  const sunoData =
    phase === "succeeded" ? sunoTracks(t, ctx) : working && status !== "PENDING" ? sunoTracks(t, ctx, true) : [];
  return envelope(200, "success", {
    taskId: t.id,
    parentMusicId: "",
    param: JSON.stringify(t.body),
    response: sunoData.length ? { taskId: t.id, sunoData } : null,
    status,
    type: "chirp-" + t.model.toLowerCase().replace("_", "-"),
    operationType: "generate",
    errorCode: phase === "failed" ? 501 : null,
    errorMessage: phase === "failed" ? (fail?.message ?? "Audio generation failed") : null,
  });
}

const covers = new WeakMap<FakeTask, string[]>(); // cover art per track, made once

/** Two tracks (or behaviour.count); while still generating, only stream URLs and no durations. */
function sunoTracks(t: FakeTask, ctx: FakeContext, generating = false) {
  const { ids, seconds } = produce(ctx, t, {}, { count: 2, seconds: 30 });
  const body = t.body as Record<string, unknown>;
  if (!covers.has(t))
    covers.set(
      t,
      ids.map(() => ctx.files.put("image")),
    );
  return ids.map((id, i) => ({
    id: `${t.id}-${i}`,
    audioUrl: generating ? "" : `${ctx.base}/files/${id}.mp3`,
    sourceAudioUrl: generating ? "" : `${ctx.base}/files/${id}.mp3`,
    streamAudioUrl: `${ctx.base}/files/${id}.mp3`,
    imageUrl: `${ctx.base}/files/${covers.get(t)![i]}.png`,
    prompt: String(body.prompt ?? ""),
    modelName: "chirp-" + t.model.toLowerCase(),
    title: String(body.title ?? "Untitled"),
    tags: String(body.style ?? ""),
    createTime: new Date(t.createdAt).toISOString().replace("T", " ").slice(0, 19),
    duration: generating ? null : seconds,
  }));
}
