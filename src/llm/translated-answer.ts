// A translated call's JSON answer: read whole (a translation needs all of it), metered by the native protocol's
// usage reader, decoded and encoded into the client's protocol. Also what both answer forms share: their headers,
// and the charge of a call whose translation told the client it failed.

import { ApiError } from "../http/errors";
import type { Translation } from "./translated";
import { answerVerdict, callVerdict, endCall, type Call } from "./call";
import { answerHeaders, answerUnread, unusableAnswer } from "./call-failures";
import { usageVerdict, type Verdict } from "./meter";
import { readHead, type Head } from "./answer-head";
import { textOf } from "./body";
import { restoreAnswerToolNames } from "./translate/tool-names";
import type { TokenUsage } from "./usage";

/**
 * The most of a translated JSON answer read: it is translated whole, so it is held whole, and an endless or runaway
 * body must not take the process's memory (a native answer over 64 KiB is pumped, keeping only its tail). Far above
 * any real answer: 128k output tokens are about 1 MB of JSON.
 */
export const TRANSLATED_ANSWER_BYTES = 16 * 1024 * 1024;

/** A whole JSON answer: it must all be in before its other form exists. */
export async function translatedAnswer(call: Call, t: Translation, res: Response): Promise<Response> {
  const status = res.status;
  let head: Head;
  try {
    // Read whole (a translation needs all of it), under the same silence limit as a native answer.
    head = await readHead(res, TRANSLATED_ANSWER_BYTES, call.deps.timeouts.silenceMs);
  } catch (e) {
    return answerUnread(call, e, status);
  }
  const { text, json } = wholeJson(call, res, head);
  const verdict = callVerdict(call, () => answerVerdict(call, t.native, text));
  if (verdict.outcome === "upstream_bad_response") {
    // Not a whole JSON object (answerVerdict): released, as on the native path.
    endCall(call, verdict, status, performance.now());
    throw new ApiError(
      502,
      "upstream_bad_response",
      "The upstream's answer was not a usable response; nothing was charged. Retry the request.",
    );
  }
  const out = encodedAnswer(call, t, json, verdict, status);
  endCall(call, verdict, status, performance.now());
  const headers = translatedHeaders(res, call, t);
  headers["content-type"] = "application/json";
  return new Response(JSON.stringify(out), { status, headers });
}

/** The answer's text and JSON; an answer over the bound or not JSON is unusable (a 502, nothing charged). */
function wholeJson(call: Call, res: Response, head: Head): { text: string; json: any } {
  const contentType = res.headers.get("content-type") ?? "";
  if (!head.ended)
    unusableAnswer(call, res.status, contentType, `answer over ${TRANSLATED_ANSWER_BYTES} bytes`, () =>
      head.reader!.cancel(),
    );
  const text = textOf(head.chunks);
  try {
    return { text, json: JSON.parse(text) };
  } catch {
    unusableAnswer(call, res.status, contentType, "not JSON", null);
  }
}

/** The answer in the client's protocol; one that cannot be translated ends the call as failed and is a 502. */
function encodedAnswer(call: Call, t: Translation, json: any, verdict: Verdict, status: number) {
  try {
    return t.client.encodeAnswer(
      restoreAnswerToolNames(t.toolNames, t.upstream.decodeAnswer(json, t.target)),
      t.request,
    );
  } catch (e) {
    const why = `upstream answer not translatable: ${(e as Error)?.message ?? e}`;
    // Through meter, as every charge: max_credits caps it.
    endCall(
      call,
      callVerdict(call, () => failedTranslation(call, verdict.outcome === "ok" ? verdict.usage : null, why)),
      status,
      performance.now(),
    );
    call.deps.ctx.log.warn("translated answer not readable", {
      request_id: call.requestId,
      model: call.model.id,
      error: why,
    });
    throw new ApiError(
      502,
      "upstream_bad_response",
      "The upstream's answer could not be translated into this protocol. Retry the request.",
    );
  }
}

/** The answer's headers; `x-switchyard-dropped-tools` names the hosted tools left out of the upstream request. */
export function translatedHeaders(res: Response, call: Call, t: Translation): Record<string, string> {
  const headers = answerHeaders(res, call.baseHeaders);
  if (t.droppedTools) headers["x-switchyard-dropped-tools"] = t.droppedTools.join(", ");
  return headers;
}

/** A call the translation told the client had failed: charged the usage the upstream stated, if any, never as ok. */
export function failedTranslation(
  call: Pick<Call, "model" | "plan">,
  usage: TokenUsage | null,
  error: string,
): Verdict {
  if (!usage) return { outcome: "failed", charge: null, usage: null, error };
  return { ...usageVerdict(usage, call.model, call.plan), outcome: "failed", error };
}
