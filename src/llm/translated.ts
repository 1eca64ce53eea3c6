// The translated call path: a client calling an LLM on a protocol its provider does not speak (providers.ts says
// which it speaks). The client's request is decoded into the internal form (translate/ir.ts) and encoded for the
// upstream before anything is held; the answer comes back the same way, JSON whole, a stream event by event.
//
// Metering never reads the translation: it reads the upstream's own usage with the native protocol's tap or usage
// reader, so the charge is the native formula on the provider's numbers, with the native path's hold, max_credits,
// settlement and disconnect rules (proxy.ts). One rule is the translation's own: a call whose translation told the
// client it failed (an upstream event or answer that could not be translated, a stream that ended without its
// terminal event) is recorded as failed and charged only the usage the upstream stated before then, if any.

import { ApiError } from "../http/errors";
import type { LlmModel } from "../catalog/model";
import { protocols, type LlmProtocol } from "./protocols/index";
import { reserialised } from "./protocols/common";
import { dialectFor, type Provider } from "./providers";
import { codecs } from "./translate/codecs";
import { TranslationError, type ClientCodec, type TranslateTarget, type UpstreamCodec } from "./translate/ir";
import { answerVerdict, callVerdict, endCall, type Call } from "./call";
import { answerHeaders, answerUnread, throwIfGatewaySide, unusableAnswer, upstreamFailed } from "./call-failures";
import { callUpstream, upstreamHeaders } from "./upstream";
import { FALLBACK_MAX_OUTPUT, usageVerdict, streamVerdict, type Verdict } from "./meter";
import { pump, type PumpEnd } from "./pump";
import { headOf, readHead, type Head } from "./answer-head";
import { answerTypeMisfit, textOf } from "./body";
import { liftIdleTimeout } from "./timeouts";
import { createStreamTranslator } from "./translated-stream";
import { restoreAnswerToolNames, shortenToolNames, type ToolNames } from "./translate/tool-names";
import type { TokenUsage } from "./usage";

export interface Translation {
  client: ClientCodec;
  upstream: UpstreamCodec;
  target: TranslateTarget;
  /** the protocol the provider speaks: its tap and usage reader meter the call */
  native: LlmProtocol;
  /** the request for the upstream, JSON */
  text: string;
  /** the client's request (without max_credits): the client codec's encoders echo some of it */
  request: Record<string, any>;
  stream: boolean;
  /** tool names shortened for the upstream → the client's (translate/tool-names.ts); null: none was */
  toolNames: ToolNames;
  /** hosted tools the client offered that the target cannot run, left out: the answer names them in a header */
  droppedTools?: string[];
}

const NATIVE: Record<string, LlmProtocol> = {
  "/v1/messages": protocols.anthropic,
  "/v1/responses": protocols.responses,
  "/v1/chat/completions": protocols.chat,
};

/**
 * The upstream request for a call on `path` to a model whose provider speaks `spoken`, or the client's 400: a field
 * that cannot be carried (`unsupported_for_model`, naming it) or a shape the codec does not accept. Runs before any
 * hold: a refused request holds nothing and sends nothing.
 */
export function prepareTranslation(
  path: string,
  spoken: string,
  body: Record<string, any>,
  model: LlmModel,
  provider: Provider,
  warn: (msg: string, f: object) => void,
): Translation {
  const client = codecs[path]!.client;
  const upstream = codecs[spoken]!.upstream;
  const { max_credits: _gatewayOnly, ...request } = body;
  const target: TranslateTarget = {
    provider: provider.name,
    model: model.upstream_model,
    dialect: dialectFor(provider, model),
  };
  try {
    const ir = client.decodeRequest(request);
    ir.model = model.upstream_model;
    // The hold's output (meter.ts planHold) when the client states none; Anthropic requires a number. An ask above
    // the model's maximum is clamped to it, as the hold is: agents send one max_tokens to every model, and the
    // upstream would refuse the call for it.
    ir.maxOutputTokens ??= model.max_output_tokens ?? FALLBACK_MAX_OUTPUT;
    if (model.max_output_tokens !== undefined && ir.maxOutputTokens > model.max_output_tokens)
      ir.maxOutputTokens = model.max_output_tokens;
    const toolNames = shortenToolNames(ir);
    const text = reserialised(upstream.encodeRequest(ir, target));
    return {
      client,
      upstream,
      target,
      native: NATIVE[spoken]!,
      text,
      request,
      stream: ir.stream,
      toolNames,
      ...(ir.droppedTools && { droppedTools: ir.droppedTools }),
    };
  } catch (e) {
    if (e instanceof TranslationError) throw new ApiError(400, "unsupported_for_model", e.message, { param: e.param });
    if (e instanceof ApiError) throw e;
    // A shape the codec did not expect: the caller's input, so a 400; logged so the codec can learn it.
    warn("request not translatable", { model: model.id, path, error: String((e as Error)?.message ?? e) });
    throw new ApiError(
      400,
      "invalid_request",
      `This request could not be translated for ${model.id}; check its shape against the ${path} reference.`,
    );
  }
}

const NO_CLIENT_HEADERS = new Headers();
/** The most of an upstream error body read for its message. */
const ERROR_BODY_BYTES = 64 * 1024;

export async function forwardTranslated(call: Call): Promise<Response> {
  const t = call.translation!;
  const signal = call.request.signal; // aborts the upstream the moment the client leaves (see pump.ts)
  liftIdleTimeout(call.server, call.request); // the upstream timeouts govern until endCall restores it, as natively
  let res: Response;
  try {
    // None of the client's protocol headers (anthropic-beta, openai-beta) mean anything in the upstream's protocol.
    res = await callUpstream(
      call.provider,
      call.url,
      upstreamHeaders(NO_CLIENT_HEADERS, call.provider.name),
      t.text,
      signal,
      call.deps.timeouts,
    );
  } catch (e) {
    return upstreamFailed(call, e);
  }
  if (!res.ok || !res.body) return translatedError(call, res);
  const contentType = res.headers.get("content-type") ?? "";
  const sse = contentType.startsWith("text/event-stream");
  // A 200 that cannot be the answer asked for: released, as on the native path.
  const misfit = answerTypeMisfit(t.stream, sse, contentType);
  if (misfit) unusableAnswer(call, res.status, contentType, misfit, () => res.body!.cancel());
  return sse ? translatedStream(call, t, res) : translatedAnswer(call, t, res);
}

/**
 * The most of a translated JSON answer read: it is translated whole, so it is held whole, and an endless or runaway
 * body must not take the process's memory (a native answer over 64 KiB is pumped, keeping only its tail). Far above
 * any real answer: 128k output tokens are about 1 MB of JSON.
 */
export const TRANSLATED_ANSWER_BYTES = 16 * 1024 * 1024;

/** A whole JSON answer: it must all be in before its other form exists. */
async function translatedAnswer(call: Call, t: Translation, res: Response): Promise<Response> {
  const status = res.status;
  let head: Head;
  let json: any;
  try {
    // Read whole (a translation needs all of it), under the same silence limit as a native answer.
    head = await readHead(res, TRANSLATED_ANSWER_BYTES, call.deps.timeouts.silenceMs);
  } catch (e) {
    return answerUnread(call, e, status);
  }
  if (!head.ended)
    unusableAnswer(
      call,
      status,
      res.headers.get("content-type") ?? "",
      `answer over ${TRANSLATED_ANSWER_BYTES} bytes`,
      () => head.reader!.cancel(),
    );
  const text = textOf(head.chunks);
  try {
    json = JSON.parse(text);
  } catch {
    unusableAnswer(call, status, res.headers.get("content-type") ?? "", "not JSON", null);
  }
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
  let out: Record<string, unknown>;
  try {
    out = t.client.encodeAnswer(
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
  endCall(call, verdict, status, performance.now());
  const headers = translatedHeaders(res, call, t);
  headers["content-type"] = "application/json";
  return new Response(JSON.stringify(out), { status, headers });
}

/** The answer's headers; `x-switchyard-dropped-tools` names the hosted tools left out of the upstream request. */
function translatedHeaders(res: Response, call: Call, t: Translation): Record<string, string> {
  const headers = answerHeaders(res, call.baseHeaders);
  if (t.droppedTools) headers["x-switchyard-dropped-tools"] = t.droppedTools.join(", ");
  return headers;
}

function translatedStream(call: Call, t: Translation, res: Response): Response {
  const status = res.status;
  const tap = t.native.createStreamTap({ stripUsageChunk: false });
  const tr = createStreamTranslator(t, (msg, f) =>
    call.deps.ctx.log.warn(msg, { ...f, request_id: call.requestId, model: call.model.id }),
  );
  let firstByteAt: number | null = null;
  let tail: Uint8Array | null = null;
  // No dropNotice: the translator writes the client protocol's error event itself, whatever the upstream left cut.
  const upstreamBytes = pump(headOf(res.body!), call.request.signal, {
    tap,
    collect: null,
    silenceMs: call.deps.timeouts.silenceMs,
    onFirstByte: () => (firstByteAt = performance.now()),
    onEnd(how: PumpEnd) {
      tail = tr.end(how);
      const verdict = callVerdict(call, (): Verdict => {
        const r = tap.end();
        const v = streamVerdict(r, how, call.model, call.plan);
        // Told it failed, never charged as a success: the usage stated so far, if any (issue 20, point 1).
        if (tr.failure && (v.outcome === "ok" || v.outcome === "estimated" || v.outcome === "client_abort"))
          return failedTranslation(call, r.usage, tr.failure);
        return v;
      });
      endCall(call, verdict, status, firstByteAt);
    },
  });
  const headers = translatedHeaders(res, call, t);
  headers["content-type"] = "text/event-stream; charset=utf-8";
  headers["cache-control"] = "no-cache";
  return new Response(clientStream(upstreamBytes, tr, () => tail) as any, { status, headers });
}

/** The client's bytes: each upstream chunk translated as it arrives; after an error event, the upstream is let go. */
async function* clientStream(
  upstream: AsyncGenerator<Uint8Array>,
  tr: ReturnType<typeof createStreamTranslator>,
  tail: () => Uint8Array | null,
): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of upstream) {
      const out = tr.feed(chunk);
      if (out) yield out;
      // Ending the loop ends the pump as a client abort would: the upstream stops generating what nobody reads.
      if (tr.over && tr.failure) break;
    }
  } catch {
    // The pump cut the stream (a drop, the shutdown): its onEnd has run and left the client's last bytes in `tail`.
  }
  const last = tail();
  if (last) yield last;
}

/** A call the translation told the client had failed: charged the usage the upstream stated, if any, never as ok. */
function failedTranslation(call: Pick<Call, "model" | "plan">, usage: TokenUsage | null, error: string): Verdict {
  if (!usage) return { outcome: "failed", charge: null, usage: null, error };
  return { ...usageVerdict(usage, call.model, call.plan), outcome: "failed", error };
}

/**
 * An upstream error status, in the client protocol's error shape with the same status: the upstream's message
 * and code, never its body as such. Nothing is charged. Statuses about the gateway's own account stay a 502
 * (throwIfGatewaySide).
 */
async function translatedError(call: Call, res: Response): Promise<Response> {
  endCall(
    call,
    { outcome: "upstream_error", charge: null, usage: null, error: `upstream answered ${res.status}` },
    res.status,
    performance.now(),
  );
  throwIfGatewaySide(call.deps.ctx, call.provider.name, res, call.requestId);
  let err: any = null;
  try {
    // Read as an answer is, under the silence limit and a size bound: a stalled or endless error body must not keep
    // the client waiting for an error whose status already says enough.
    const head = await readHead(res, ERROR_BODY_BYTES, call.deps.timeouts.silenceMs);
    if (!head.ended) void head.reader?.cancel().catch(() => {});
    err = JSON.parse(textOf(head.chunks))?.error;
  } catch {
    // not JSON, cut, or silent: the status says enough
  }
  const message =
    typeof err?.message === "string" && err.message ? err.message : `The upstream answered status ${res.status}.`;
  const code = [err?.code, err?.type].find((c) => typeof c === "string" && c) ?? "upstream_error";
  const retry = answerHeaders(res, {});
  delete retry["content-type"];
  throw new ApiError(res.status, code, message, {
    headers: retry,
    param: typeof err?.param === "string" ? err.param : undefined,
  });
}
