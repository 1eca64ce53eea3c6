// kie.ai Suno API: POST /api/v1/generate {model, prompt, customMode, instrumental, style?, title?, callBackUrl}
// (callBackUrl is mandatory: we give our notify URL and poll anyway); GET /api/v1/generate/record-info?taskId= →
// status PENDING → TEXT_SUCCESS → FIRST_SUCCESS → SUCCESS, or a failure status. Each request makes two tracks.
import { callJson, noKey, type Adapter, type PollResult, type Upstreams } from "./types";

const BACKOFF = [3, 5, 8, 13, 20, 30];
const FAILURES = new Set(["CREATE_TASK_FAILED", "GENERATE_AUDIO_FAILED", "SENSITIVE_WORD_ERROR", "CALLBACK_EXCEPTION"]);

export function kieSunoAdapter(up: Upstreams): Adapter {
  const { base, key } = up.kie;
  const headers = { authorization: `Bearer ${key}` };
  return {
    backoff: BACKOFF,
    async submit(route, input, ctx) {
      if (!key) return noKey("KIE_API_KEY");
      const r = await callJson(`${base}/api/v1/generate`, {
        headers,
        body: { ...input, model: route.upstream_model, callBackUrl: ctx.notifyUrl },
      });
      const code = r.json?.code ?? r.status;
      if (r.status !== 200 || code !== 200 || !r.json?.data?.taskId) {
        return { kind: "refused", code: String(code), message: String(r.json?.msg ?? r.text.slice(0, 200)) };
      }
      return { kind: "accepted", ref: String(r.json.data.taskId) };
    },
    async poll(ref): Promise<PollResult> {
      const r = await callJson(`${base}/api/v1/generate/record-info?taskId=${encodeURIComponent(ref)}`, { headers });
      if (r.status !== 200 || r.json?.code !== 200) {
        if (r.json?.code === 422) return { kind: "failed", code: "upstream_lost", message: String(r.json.msg) };
        throw new Error(`kie Suno record-info answered ${r.json?.code ?? r.status}`);
      }
      const d = r.json.data;
      if (FAILURES.has(d.status))
        return { kind: "failed", code: String(d.status), message: String(d.errorMessage ?? d.status) };
      if (d.status !== "SUCCESS") return { kind: "pending" };
      const tracks: any[] = d.response?.sunoData ?? [];
      const outputs = tracks
        .filter((t) => t.audioUrl)
        .map((t) => ({ url: String(t.audioUrl), seconds: typeof t.duration === "number" ? t.duration : undefined }));
      if (outputs.length === 0)
        return { kind: "failed", code: "no_output", message: "The upstream returned no tracks" };
      return { kind: "done", outputs, facts: {} };
    },
  };
}
