// Gemini API Veo: POST {base}/v1beta/models/{model}:predictLongRunning (x-goog-api-key) with
// {instances:[{prompt, image?}], parameters:{aspectRatio, resolution, durationSeconds, negativePrompt}} →
// {name}; GET {base}/v1beta/{name} until `done` (absent while running). The video URI needs the key to download.
import { callJson, noKey, refusedFrom, type Adapter, type PollResult, type Upstreams } from "./types";

// Google suggests polling a Veo operation every ~10 s; generation takes 1–6 minutes.
const BACKOFF = [5, 10, 10, 15, 20];

export function veoAdapter(up: Upstreams): Adapter {
  const { base, key } = up.gemini;
  const headers = { "x-goog-api-key": key ?? "" };
  const baseOrigin = URL.parse(base)?.origin;
  // The key goes with a download only to the Gemini API's own origin, whatever URL the operation names.
  const keyFor = (uri: string) => (URL.parse(uri)?.origin === baseOrigin ? headers : undefined);
  return {
    backoff: BACKOFF,
    async submit(route, input) {
      if (!key) return noKey("GEMINI_API_KEY");
      const instance: Record<string, unknown> = { prompt: input.prompt };
      if (typeof input.image_url === "string") instance.image = { uri: input.image_url };
      const parameters = clean({
        aspectRatio: input.aspect_ratio,
        resolution: input.resolution,
        durationSeconds: input.duration,
        negativePrompt: input.negative_prompt,
      });
      const r = await callJson(`${base}/v1beta/models/${route.upstream_model}:predictLongRunning`, {
        headers,
        body: { instances: [instance], parameters },
      });
      if (r.status !== 200 || typeof r.json?.name !== "string") return refusedFrom(r.status, r.json, r.text);
      return { kind: "accepted", ref: r.json.name };
    },
    async poll(ref): Promise<PollResult> {
      const r = await callJson(`${base}/v1beta/${ref}`, { headers });
      if (r.status === 404) return { kind: "failed", code: "upstream_lost", message: "The operation no longer exists" };
      if (r.status !== 200) throw new Error(`veo operation answered ${r.status}`);
      const op = r.json;
      if (!op.done) return { kind: "pending" };
      if (op.error)
        return {
          kind: "failed",
          code: String(op.error.code ?? "veo_error"),
          message: String(op.error.message ?? "Video generation failed"),
        };
      const samples: any[] = op.response?.generateVideoResponse?.generatedSamples ?? [];
      const outputs = samples
        .filter((s) => s?.video?.uri)
        .map((s) => ({ url: String(s.video.uri), headers: keyFor(String(s.video.uri)), contentType: "video/mp4" }));
      if (outputs.length === 0) return { kind: "failed", code: "no_output", message: "The upstream returned no video" };
      return { kind: "done", outputs, facts: {} };
    },
  };
}

function clean(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}
