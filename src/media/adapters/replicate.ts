// Replicate predictions: POST /models/{owner}/{name}/predictions {input} → prediction; GET /predictions/{id}.
// Status starting → processing → succeeded | failed | canceled; output is a URL or an array of URLs (deleted by
// Replicate after an hour, which is why the engine copies them).
import { toUpstreamInput } from "../model";
import { callJson, noKey, refusedFrom, type Adapter, type PollResult, type Upstreams } from "./types";

const BACKOFF = [1, 2, 3, 5, 10, 20];

export function replicateAdapter(up: Upstreams): Adapter {
  const { base, key } = up.replicate;
  const headers = { authorization: `Bearer ${key}` };
  return {
    backoff: BACKOFF,
    async submit(route, input) {
      if (!key) return noKey("REPLICATE_API_TOKEN");
      const r = await callJson(`${base}/models/${route.upstream_model}/predictions`, {
        headers,
        body: { input: toUpstreamInput(route, input) },
      });
      if ((r.status !== 201 && r.status !== 200) || !r.json?.id) return refusedFrom(r.status, r.json, r.text);
      return { kind: "accepted", ref: String(r.json.id) };
    },
    async poll(ref): Promise<PollResult> {
      const r = await callJson(`${base}/predictions/${encodeURIComponent(ref)}`, { headers });
      if (r.status === 404)
        return { kind: "failed", code: "upstream_lost", message: "The prediction no longer exists" };
      if (r.status !== 200) throw new Error(`replicate answered ${r.status}`);
      const p = r.json;
      if (p.status === "failed" || p.status === "canceled")
        return { kind: "failed", code: p.status, message: String(p.error ?? p.status) };
      if (p.status !== "succeeded") return { kind: "pending" };
      const urls: unknown[] = Array.isArray(p.output) ? p.output : p.output ? [p.output] : [];
      const outputs = urls.filter((u): u is string => typeof u === "string").map((url) => ({ url }));
      if (outputs.length === 0)
        return { kind: "failed", code: "no_output", message: "The upstream returned no result files" };
      return { kind: "done", outputs, facts: {} };
    },
  };
}
