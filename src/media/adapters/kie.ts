// kie.ai Market: POST /api/v1/jobs/createTask {model, input} → {code, msg, data:{taskId}};
// GET /api/v1/jobs/recordInfo?taskId= → the record. Errors arrive as HTTP 200 with the real code in the envelope.
import { toUpstreamInput } from "../model";
import { callJson, noKey, type Adapter, type PollResult, type Upstreams } from "./types";

// kie's advice: start at 2–3 s, back off to 15–30 s.
const BACKOFF = [2, 3, 5, 8, 13, 20, 30];

export function kieAdapter(up: Upstreams): Adapter {
  const { base, key } = up.kie;
  const headers = { authorization: `Bearer ${key}` };
  return {
    backoff: BACKOFF,
    async submit(route, input) {
      if (!key) return noKey("KIE_API_KEY");
      const r = await callJson(`${base}/api/v1/jobs/createTask`, {
        headers,
        body: { model: route.upstream_model, input: toUpstreamInput(route, input) },
      });
      const code = r.json?.code ?? r.status;
      if (r.status !== 200 || code !== 200 || !r.json?.data?.taskId) {
        return { kind: "refused", code: String(code), message: String(r.json?.msg ?? r.text.slice(0, 200)) };
      }
      return { kind: "accepted", ref: String(r.json.data.taskId) };
    },
    async poll(ref): Promise<PollResult> {
      const r = await callJson(`${base}/api/v1/jobs/recordInfo?taskId=${encodeURIComponent(ref)}`, { headers });
      if (r.status !== 200 || r.json?.code !== 200) {
        // "recordInfo is null": the upstream lost the task; anything else is transient (retried at the next poll).
        if (r.json?.code === 422) return { kind: "failed", code: "upstream_lost", message: String(r.json.msg) };
        throw new Error(`kie recordInfo answered ${r.json?.code ?? r.status}`);
      }
      const d = r.json.data;
      if (d.state === "fail")
        return { kind: "failed", code: String(d.failCode || "501"), message: String(d.failMsg || "Generation failed") };
      if (d.state !== "success") return { kind: "pending" };
      // The record of a finished task is final: a resultJson that does not parse would not parse at the next poll.
      const result = parsedOrUndefined(d.resultJson || "{}");
      if (result === undefined)
        return { kind: "failed", code: "malformed_result", message: "The upstream's resultJson is not JSON" };
      const urls: unknown = result?.resultUrls;
      if (!Array.isArray(urls) || urls.length === 0)
        return { kind: "failed", code: "no_output", message: "The upstream returned no result files" };
      return { kind: "done", outputs: urls.map((url) => ({ url: String(url) })), facts: {} };
    },
  };
}

function parsedOrUndefined(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
