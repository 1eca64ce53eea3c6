// The translated call path: a client calling an LLM on a protocol its provider does not speak (providers.ts says
// which). The request is decoded into the IR (translate/ir.ts) and encoded for the upstream before anything is
// held; the answer comes back whole (translated-answer.ts) or event by event (translated-stream.ts). Metering reads
// the upstream's own usage with the native protocol's tap or usage reader, under the native path's rules (native.ts);
// a call whose translation told the client it failed (an answer or event it could not translate, a stream without
// its terminal event) is recorded as failed and charged only the usage the upstream stated before then, if any.

import { ApiError } from "../http/errors";
import type { LlmModel } from "../catalog/model";
import { protocols, type LlmProtocol } from "./protocols/index";
import { reserialised } from "./protocols/common";
import { dialectFor, type Provider } from "./providers";
import { codecs } from "./translate/codecs";
import { TranslationError, type ClientCodec, type TranslateTarget, type UpstreamCodec } from "./translate/ir";
import type { Call } from "./call";
import { answerHeaders, endUpstreamError, unusableAnswer, upstreamFailed } from "./call-failures";
import { callUpstream, successWithoutBody, upstreamHeaders } from "./upstream";
import { FALLBACK_MAX_OUTPUT } from "./meter";
import { readHead } from "./answer-head";
import { answerTypeMisfit, textOf } from "./body";
import { liftIdleTimeout } from "./timeouts";
import { translatedAnswer } from "./translated-answer";
import { translatedStream } from "./translated-stream";
import { shortenToolNames, type ToolNames } from "./translate/tool-names";

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
  if (!res.ok || successWithoutBody(res)) return translatedError(call, res);
  const contentType = res.headers.get("content-type") ?? "";
  const sse = contentType.startsWith("text/event-stream");
  // A 200 that cannot be the answer asked for: released, as on the native path.
  const misfit = answerTypeMisfit(t.stream, sse, contentType);
  if (misfit) unusableAnswer(call, res.status, contentType, misfit, () => res.body!.cancel());
  return sse ? translatedStream(call, t, res) : translatedAnswer(call, t, res);
}

/**
 * An upstream error status, in the client protocol's error shape with the same status: the upstream's message
 * and code, never its body as such. Nothing is charged. Statuses about the gateway's own account stay a 502
 * (throwIfGatewaySide).
 */
async function translatedError(call: Call, res: Response): Promise<Response> {
  endUpstreamError(call, res);
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
