// DeepSeek models are sold on /v1/responses but DeepSeek speaks Chat Completions only: the request is translated
// (translate/responses-chat.ts), and so is the answer, the stream event by event. Metering reads the upstream's
// own chat usage with the chat tap, before translation, so the charge is the chat formula on DeepSeek's numbers
// (equal to the Responses formula on the translated usage).

import { ApiError } from "../http/errors.ts";
import { protocols } from "./protocols/index.ts";
import { reserialised } from "./protocols/common.ts";
import { chatResponseToResponses, createChatToResponsesStream, createTranslateContext, responsesRequestToChat, RESYNC, TranslationError } from "./translate/responses-chat.ts";
import { answerHeaders, answerUnread, dropNoticeFor, finish, judgeAnswer, meter, upstreamError, upstreamFailed, type Call } from "./proxy.ts";
import { callUpstream, upstreamHeaders } from "./upstream.ts";
import { judgeStream, type Verdict } from "./meter.ts";
import { headOf, pump } from "./pump.ts";

const chat = protocols.chat;

export async function translatedResponses(call: Call): Promise<Response> {
  const { request, body } = call;
  let chatText: string;
  try {
    const chatBody = responsesRequestToChat(body);
    chatBody.model = call.model.upstream_model;
    chatText = reserialised(chatBody);
  } catch (e) {
    finish(call, { outcome: "rejected", charge: null, usage: null, error: "request not translatable" }, null, null);
    if (e instanceof TranslationError) throw new ApiError(400, "unsupported_for_model", e.message, { param: e.param });
    if (e instanceof ApiError) throw e;
    // Anything else is a shape the translator did not expect: the caller's input, so a 400, logged to be taught.
    call.d.ctx.log.warn("responses request not translatable", { request_id: call.requestId, error: String((e as Error)?.message ?? e) });
    throw new ApiError(400, "unsupported_for_model", "This request could not be translated for this model; check the shape of `input`.", { param: "input" });
  }
  const tctx = createTranslateContext(body);
  const signal = request.signal; // aborts the upstream the moment the client leaves (see pump.ts)
  let res: Response;
  try {
    res = await callUpstream(call.provider, call.url, upstreamHeaders(request.headers, "deepseek"), chatText, signal);
  } catch (e) {
    return upstreamFailed(call, e);
  }
  // Chat-style error bodies ({"error": {...}}) are already the Responses API's error shape: passed through.
  if (!res.ok || !res.body) return upstreamError(call, res);

  const status = res.status;
  if (body.stream !== true) {
    // The whole chat answer is needed before its Responses form exists: this path buffers by nature.
    let text: string;
    let json: any;
    try {
      text = await res.text();
      json = JSON.parse(text);
    } catch (e) {
      return answerUnread(call, e, status, "unreadable upstream answer", "The upstream's answer could not be read.");
    }
    finish(call, meter(call, () => judgeAnswer(call, chat, text)), status, performance.now());
    const headers = answerHeaders(res, call.baseHeaders);
    headers["content-type"] = "application/json";
    return new Response(JSON.stringify(chatResponseToResponses(json, tctx)), { status, headers });
  }

  const tap = chat.createStreamTap({ stripUsageChunk: false });
  let firstByteAt: number | null = null;
  const chatBytes = pump(headOf(res.body), signal, {
    tap,
    collect: null,
    // In chat's shape: the translator turns it into response.failed, as it does any chat error chunk.
    dropNotice: dropNoticeFor(chat, call.requestId),
    resync: RESYNC, // the translator writes whole events: a chat event cut in the middle still ends in response.failed
    onFirstByte: () => (firstByteAt = performance.now()),
    onEnd(how) {
      const verdict: Verdict = meter(call, () => judgeStream(tap.end(), how, call.model, call.plan));
      finish(call, verdict, status, firstByteAt);
    },
  });
  const headers = answerHeaders(res, call.baseHeaders);
  headers["content-type"] = "text/event-stream; charset=utf-8";
  headers["cache-control"] = "no-cache";
  return new Response((ReadableStream as any).from(chatBytes).pipeThrough(createChatToResponsesStream(tctx)), { status, headers });
}
