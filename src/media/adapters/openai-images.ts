// OpenAI Images: synchronous POST {base}/images/generations → {data:[{b64_json}|{url}], usage}. The answer is the
// result, so submit returns it at once (the engine stores the base64 as files). GPT image models are billed by
// tokens: the usage is turned into a USD cost with the model's published token prices, which pricing uses when the
// catalog rule says `settle: upstream_cost` (never above the estimate that was held).
import {
  callJson,
  noKey,
  refusedFrom,
  type Adapter,
  type UpstreamFacts,
  type UpstreamOutput,
  type Upstreams,
} from "./types";

// USD per million tokens: text input, image input, image output (OpenAI's published gpt-image-1 prices).
const TOKEN_USD: Record<string, { text: number; imageIn: number; out: number }> = {
  "gpt-image-1": { text: 5, imageIn: 10, out: 40 },
};

// The answer carries the images as base64: up to 10 of about 6 MB each (1536x1024 PNG), 4/3 larger as base64.
const ANSWER_WITH_IMAGES_MAX_BYTES = 128 * 1024 * 1024;

export function openaiImagesAdapter(up: Upstreams): Adapter {
  const { base, key } = up.openai;
  return {
    backoff: [1],
    async submit(route, input, ctx) {
      if (!key) return noKey("OPENAI_API_KEY");
      const body = { ...input, model: route.upstream_model };
      // A generation can take a minute or two; the engine keeps the task's lease while it runs (lease.ts). Never past
      // the task's deadline: its credits and its key's concurrency slot are held until then, not longer.
      const timeoutMs = Math.max(1, Math.min(110_000, ctx.deadlineAt - Date.now()));
      const r = await callJson(`${base}/images/generations`, {
        headers: { authorization: `Bearer ${key}` },
        body,
        timeoutMs,
        maxBytes: ANSWER_WITH_IMAGES_MAX_BYTES,
      });
      if (r.status === 400 && r.json?.error?.type === "image_generation_user_error") {
        return {
          kind: "failed",
          code: String(r.json.error.code ?? "moderation_blocked"),
          message: String(r.json.error.message),
        };
      }
      if (r.status !== 200 || !Array.isArray(r.json?.data)) return refusedFrom(r.status, r.json, r.text);
      const format = String(r.json.output_format ?? input.output_format ?? "png");
      const outputs = (r.json.data as any[]).flatMap((d): UpstreamOutput[] =>
        typeof d?.b64_json === "string" && d.b64_json
          ? [{ bytes: new Uint8Array(Buffer.from(d.b64_json, "base64")), contentType: `image/${format}` }]
          : typeof d?.url === "string" && d.url
            ? [{ url: d.url }]
            : [],
      );
      // An answer without a single image is a failure, whatever it cost upstream: the caller gets nothing to pay for.
      if (!outputs.length)
        return { kind: "failed", code: "no_output", message: "The upstream answered without an image." };
      return { kind: "done", outputs, facts: costFacts(route.upstream_model, r.json.usage) };
    },
    async poll() {
      return { kind: "failed", code: "not_pollable", message: "OpenAI Images is synchronous" };
    },
  };
}

function costFacts(model: string, usage: any): UpstreamFacts {
  const p = TOKEN_USD[model];
  if (!p || typeof usage?.output_tokens !== "number") return {};
  const text = usage.input_tokens_details?.text_tokens ?? usage.input_tokens ?? 0;
  const image = usage.input_tokens_details?.image_tokens ?? 0;
  return { upstreamCostUsd: (text * p.text + image * p.imageIn + usage.output_tokens * p.out) / 1_000_000 };
}
