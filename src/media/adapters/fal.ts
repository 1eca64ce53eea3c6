// fal.ai queue: POST {base}/{model_id} → {request_id, status_url, response_url}. We keep and follow the returned
// URLs (status and result paths use only the first two segments of long model ids). Status: IN_QUEUE / IN_PROGRESS
// (202), COMPLETED (200; with `error` when it failed). The result GET returns the output or the failure's detail.
import { toUpstreamInput } from "../model";
import { UpstreamUrlRefused, type UrlPolicy } from "../upstream-fetch";
import {
  callJson,
  noKey,
  refusedFrom,
  type Adapter,
  type PollResult,
  type Upstreams,
  type UpstreamOutput,
} from "./types";

const BACKOFF = [1, 2, 3, 5, 8, 15];

export function falAdapter(up: Upstreams, urls: UrlPolicy): Adapter {
  const { base, key } = up.fal;
  const headers = { authorization: `Key ${key}` };
  const baseOrigin = URL.parse(base)?.origin;
  /** A URL fal handed over: only on fal's own origin (it gets fal's key), and through the address guard. */
  const get = (url: unknown) => {
    if (typeof url !== "string" || URL.parse(url)?.origin !== baseOrigin)
      throw new UpstreamUrlRefused(`fal URL ${String(url).slice(0, 100)} is not on ${baseOrigin}`);
    return callJson(url, { headers, guard: urls });
  };
  async function pollUrls(ref: string): Promise<PollResult> {
    const { status_url, response_url } = JSON.parse(ref) as { status_url: string; response_url: string };
    const s = await get(status_url);
    if (s.status === 202) return { kind: "pending" };
    if (s.status !== 200) throw new Error(`fal status answered ${s.status}`);
    if (s.json?.status !== "COMPLETED") return { kind: "pending" };
    if (s.json.error)
      return { kind: "failed", code: String(s.json.error_type ?? "fal_error"), message: String(s.json.error) };
    const r = await get(response_url);
    if (r.status !== 200) {
      const d = r.json?.detail?.[0];
      return { kind: "failed", code: String(d?.type ?? r.status), message: String(d?.msg ?? r.text.slice(0, 200)) };
    }
    const outputs = outputsOf(r.json);
    if (outputs.length === 0)
      return { kind: "failed", code: "no_output", message: "The upstream returned no result files" };
    return { kind: "done", outputs, facts: {} };
  }

  return {
    backoff: BACKOFF,
    async submit(route, input) {
      if (!key) return noKey("FAL_KEY");
      const r = await callJson(`${base}/${route.upstream_model}`, { headers, body: toUpstreamInput(route, input) });
      if (r.status !== 200 || !r.json?.request_id) return refusedFrom(r.status, r.json, r.text);
      const { status_url, response_url } = r.json;
      return { kind: "accepted", ref: JSON.stringify({ status_url, response_url }) };
    },
    async poll(ref): Promise<PollResult> {
      try {
        return await pollUrls(ref);
      } catch (e) {
        if (!(e instanceof UpstreamUrlRefused)) throw e;
        return { kind: "failed", code: "result_url_refused", message: e.message };
      }
    },
  };
}

/** fal outputs: {images:[{url}]}, {video:{url}}, {audio:{url}} or {audio_file:{url}}. */
function outputsOf(json: any): UpstreamOutput[] {
  if (Array.isArray(json?.images))
    return json.images.filter((i: any) => i?.url).map((i: any) => ({ url: i.url, contentType: i.content_type }));
  for (const k of ["video", "audio", "audio_file", "image"]) {
    const f = json?.[k];
    if (f?.url) return [{ url: f.url, contentType: f.content_type }];
  }
  return [];
}
