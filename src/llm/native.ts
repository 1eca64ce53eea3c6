// A native call: the client's protocol is the one the model's provider speaks, so its bytes go upstream as they came
// and the answer comes back as it arrives, the tap on the side. An answer whose end is already in is answered in one
// piece; one still arriving is pumped (pump.ts). Either way it is metered once it ends (call.ts endCall).

import type { LlmProtocol } from "./protocols/index";
import { callUpstream, queryOf, successWithoutBody, upstreamHeaders } from "./upstream";
import { answerTypeMisfit, firstNonSpace, textOf } from "./body";
import { estimateVerdict, NOTHING_SEEN, streamVerdict, UPSTREAM_SILENT, type Verdict } from "./meter";
import { pump, throughTap, type PumpEnd } from "./pump";
import { readArrived, readHead, WHOLE_ANSWER_BYTES, type Head } from "./answer-head";
import { joined, tokenCounter } from "./bytes";
import { liftIdleTimeout } from "./timeouts";
import { answerVerdict, callVerdict, endCall, type Call } from "./call";
import {
  answerHeaders,
  answerUnread,
  dropNoticeFor,
  logUnusable,
  unusableAnswer,
  upstreamError,
  upstreamFailed,
} from "./call-failures";

export async function forwardNative(call: Call): Promise<Response> {
  const { proto, request } = call;
  const { body: upstreamBody } = call.upstream!;
  // The client's own signal: Bun fires it the moment the client disconnects, which aborts the upstream request
  // (headers or body) at once (callUpstream). The pump listens to it only for answers that are pumped (pump.ts).
  liftIdleTimeout(call.server, request); // the timeouts below govern until endCall restores it
  let res: Response;
  try {
    res = await callUpstream(
      call.provider,
      call.url + queryOf(request),
      upstreamHeaders(request.headers, call.provider.name),
      upstreamBody,
      request.signal,
      call.deps.timeouts,
    );
  } catch (e) {
    return upstreamFailed(call, e);
  }
  if (!res.ok || successWithoutBody(res)) return upstreamError(call, res);
  const contentType = res.headers.get("content-type") ?? "";
  const sse = contentType.startsWith("text/event-stream");
  const misfit = answerTypeMisfit(proto.isStream(call.body), sse, contentType);
  if (misfit) unusableAnswer(call, res.status, contentType, misfit, () => res.body!.cancel());
  const status = res.status;
  let head: Head;
  try {
    const reading = sse ? readArrived(res.body!) : readHead(res, WHOLE_ANSWER_BYTES, call.deps.timeouts.silenceMs);
    head = reading instanceof Promise ? await reading : reading; // a JSON answer already in: no wait
  } catch (e) {
    return answerUnread(call, e, status);
  }
  const answer: Answer = { status, contentType, sse, headers: answerHeaders(res, call.baseHeaders), head };
  // A JSON answer too large to be read whole is forwarded before its end is seen: its first bytes at least.
  if (!sse && !head.ended && firstNonSpace(head.chunks) !== 0x7b /* { */)
    unusableAnswer(call, status, contentType, "not a JSON object", () => head.reader!.cancel());
  if (sse) answer.headers["cache-control"] = "no-cache";
  const dropped = call.upstream!.droppedTools;
  if (dropped) answer.headers["x-switchyard-dropped-tools"] = dropped.join(", ");
  const strip = { stripUsageChunk: call.upstream!.stripUsageChunk };
  // A whole stream whose bytes show its usage plainly needs no tap (sse-whole.ts); any other goes through it.
  const whole = sse && head.ended ? proto.wholeStream?.(joined(head.chunks), strip) : null;
  if (whole) {
    head.chunks = [whole.bytes];
    return answerWhole(call, answer, () => streamVerdict(whole.tapped, "end", call.model, call.plan));
  }
  const tap = sse ? proto.createStreamTap(strip) : null;
  if (tap) head.chunks = throughTap(tap, head.chunks, head.ended);
  // All of it is in already: answered in one piece (pump.ts says why); a stream that ended before its own end goes
  // through the pump, which adds the protocol's error event.
  if (head.ended && (!tap || tap.sawEnd()))
    return answerWhole(call, answer, () =>
      tap ? streamVerdict(tap.end(), "end", call.model, call.plan) : answerVerdict(call, proto, textOf(head.chunks)),
    );
  return answerPumped(call, answer, tap);
}

/** An upstream answer as far as it has been read: its status, our headers for it, its first chunks. */
interface Answer {
  status: number;
  contentType: string;
  sse: boolean;
  headers: Record<string, string>;
  head: Head;
}

type Tap = ReturnType<LlmProtocol["createStreamTap"]>;

/** The whole answer is in: metered now (`judge`), and answered in one piece with a content-length. */
function answerWhole(call: Call, answer: Answer, judge: () => Verdict): Response {
  const { head, status } = answer;
  const verdict = callVerdict(call, judge);
  if (verdict.outcome === "upstream_bad_response")
    unusableAnswer(call, status, answer.contentType, verdict.error!, null);
  endCall(call, verdict, status, head.firstByteAt);
  return new Response(joined(head.chunks), { status, headers: answer.headers });
}

/** The answer is still arriving: pumped to the client as it comes, metered when it ends (however it ends). */
function answerPumped(call: Call, answer: Answer, tap: Tap | null): Response {
  const { proto } = call;
  const { head, status, sse } = answer;
  const collected: Uint8Array[] | null = sse ? null : head.chunks;
  // A long JSON answer is kept only as its tail; web searches it lists before that are counted on the way.
  const searches = !sse && call.plan.webSearch && proto.searchItemToken ? tokenCounter(proto.searchItemToken) : null;
  if (searches) for (const chunk of head.chunks) searches.feed(chunk);
  let firstByteAt = head.firstByteAt;
  // A long JSON answer's verdict, worked out once its end is in: an unusable one has its connection cut.
  let longVerdict: Verdict | null = null;
  const judgeLongAnswer = () => (longVerdict ??= answerVerdict(call, proto, textOf(collected!), searches?.count, true));
  const body = pump(head, call.request.signal, {
    tap,
    collect: collected,
    watch: searches?.feed,
    dropNotice: sse ? dropNoticeFor(proto, call.requestId) : undefined,
    wholeBody: sse ? undefined : () => judgeLongAnswer().outcome !== "upstream_bad_response",
    silenceMs: call.deps.timeouts.silenceMs,
    onFirstByte: () => (firstByteAt = performance.now()),
    onEnd(how: PumpEnd) {
      const verdict = callVerdict(call, () =>
        tap ? streamVerdict(tap.end(), how, call.model, call.plan) : pumpedBodyVerdict(call, how, judgeLongAnswer),
      );
      if (verdict.outcome === "upstream_bad_response") logUnusable(call, status, answer.contentType, verdict.error);
      endCall(call, verdict, status, firstByteAt);
    },
  });
  return new Response(body as any, { status, headers: answer.headers });
}

/** A pumped JSON answer's verdict by how its pump ended. */
function pumpedBodyVerdict(call: Call, how: PumpEnd, judgeLongAnswer: () => Verdict): Verdict {
  if (how === "end") return judgeLongAnswer();
  if (how === "client_abort" || how === "shutdown") return estimateVerdict(NOTHING_SEEN, call.model, call.plan, how);
  if (how === "timeout") return { outcome: "upstream_timeout", charge: null, usage: null, error: UPSTREAM_SILENT };
  return { outcome: "dropped", charge: null, usage: null, error: "upstream connection ended early" };
}
