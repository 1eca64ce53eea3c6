// Fake OpenAI Images API (base https://api.openai.com/v1): synchronous POST /images/generations with
// `Authorization: Bearer <key>`, answering {created, data:[{b64_json}], usage{input_tokens, output_tokens, total_tokens}}
// (GPT image models always return base64). Behaviour: delayMs = time to answer; never = hang until the client gives
// up; refuse = an HTTP error before any work; fail = a generation error (400 moderation_blocked unless code is a status).
import { pngBytes } from "./files";
import type { Behavior } from "./control";
import { isObject, json, newId, sleep, type Handler } from "./http";

const error = (status: number, message: string, type: string, code: string | null, param: string | null = null) =>
  json({ error: { message, type, param, code } }, status);

// Output tokens per image of gpt-image-1 by quality and size (square / portrait or landscape).
const TOKENS: Record<string, [number, number]> = {
  low: [272, 408],
  medium: [1056, 1584],
  high: [4160, 6240],
  auto: [1056, 1584],
};

export const openaiImagesHandler: Handler = async (req, path, body, ctx) => {
  if (req.headers.get("authorization") !== `Bearer ${ctx.key}`) {
    return error(401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key");
  }
  if (req.method !== "POST" || path !== "/v1/images/generations")
    return error(404, `Unknown request URL: ${req.method} ${path}`, "invalid_request_error", "unknown_url");
  if (!isObject(body))
    return error(400, "We could not parse the JSON body of your request.", "invalid_request_error", null);
  if (typeof body.prompt !== "string" || !body.prompt)
    return error(
      400,
      "Missing required parameter: 'prompt'.",
      "invalid_request_error",
      "missing_required_parameter",
      "prompt",
    );
  const model = typeof body.model === "string" ? body.model : "dall-e-2";
  const behavior = ctx.control.behaviorFor("openai-images", model);
  if (behavior.refuse) return refusal(behavior.refuse);
  const t = ctx.control.add({ id: newId("img_"), provider: "openai-images", model, input: body, body, behavior });
  if (behavior.never) {
    await new Promise<void>((resolve) => req.signal.addEventListener("abort", () => resolve(), { once: true }));
    return error(499, "client went away", "server_error", null);
  }
  if (behavior.delayMs) await sleep(behavior.delayMs);
  t.polls = behavior.polls ?? 1; // synchronous: this answer is the final state (recorded on the task)
  ctx.control.peek(t);
  if (behavior.fail) return failure(behavior.fail);
  return generated(body, behavior);
};

/** An HTTP error before any work: a 429 rate limit unless the behaviour names another status or code. */
function refusal(r: NonNullable<Behavior["refuse"]>): Response {
  const status = r.status ?? (typeof r.code === "number" ? r.code : 429);
  return error(
    status,
    r.message ?? "Rate limit reached for images",
    status === 429 ? "requests" : "invalid_request_error",
    typeof r.code === "string" ? r.code : status === 429 ? "rate_limit_exceeded" : null,
  );
}

/** A generation error: 400 moderation_blocked, or a server error when the code is a status. */
function failure(f: NonNullable<Behavior["fail"]>): Response {
  if (typeof f.code === "number")
    return error(f.code, f.message ?? "The server had an error processing your request.", "server_error", null);
  return error(
    400,
    f.message ?? "Your request was rejected by the safety system.",
    "image_generation_user_error",
    typeof f.code === "string" ? f.code : "moderation_blocked",
  );
}

/** The images asked for, base64, with usage counted as gpt-image-1 counts it (or the behaviour's own). */
function generated(body: Record<string, any>, behavior: Behavior): Response {
  const n = behavior.count ?? (typeof body.n === "number" ? body.n : 1);
  const quality = typeof body.quality === "string" ? body.quality : "auto";
  const size = typeof body.size === "string" ? body.size : "1024x1024";
  const perImage = (TOKENS[quality] ?? TOKENS.auto!)[size === "1024x1024" ? 0 : 1];
  const inputTokens = Math.ceil(body.prompt.length / 4);
  const b64 = Buffer.from(pngBytes()).toString("base64");
  return json({
    created: Math.floor(Date.now() / 1000),
    background: body.background ?? "opaque",
    data: Array.from({ length: n }, () => ({ b64_json: b64 })),
    output_format: body.output_format ?? "png",
    quality: quality === "auto" ? "medium" : quality,
    size,
    usage: behavior.usage ?? {
      input_tokens: inputTokens,
      input_tokens_details: { image_tokens: 0, text_tokens: inputTokens },
      output_tokens: perImage * n,
      total_tokens: inputTokens + perImage * n,
    },
  });
}
