// The internal form a translated call passes through: client protocol → IrRequest → upstream protocol, and the
// upstream's answer → IrAnswer / IrEvents → client protocol. Each protocol has one codec with a client side and an
// upstream side, so every pair of protocols works without a translator per pair; native calls never come here.
// Metering never reads this form (it taps the upstream's native usage): IrUsage is only what the client is told.

/** The stop reasons every protocol can say (Anthropic's words; codecs map them to finish_reason / status). */
export type StopReason = "end_turn" | "tool_use" | "max_tokens" | "stop_sequence" | "refusal" | "pause_turn";

/** A prompt-caching hint (Anthropic cache_control). Kept only when the upstream is Anthropic. */
export interface CacheHint {
  type: "ephemeral";
  ttl?: "5m" | "1h";
}

export type ImageSource = { kind: "url"; url: string } | { kind: "base64"; mediaType: string; data: string };

export type TextPart = { type: "text"; text: string; cache?: CacheHint };
export type ImagePart = { type: "image"; source: ImageSource; detail?: string; cache?: CacheHint };

/**
 * A model's thinking / reasoning. `origin` is the provider and model that produced it (originOf; null: unknown).
 * `opaque` is the provider's proof or state (Anthropic `signature` or redacted `data`, OpenAI `encrypted_content`):
 * it is only ever sent back to that provider's same model (a Claude signature is valid only for the model that
 * signed it), and an upstream codec drops reasoning parts of any other origin.
 * When a client protocol must carry another provider's opaque value in its own field (a Claude signature inside a
 * Responses `encrypted_content`, an OpenAI encrypted_content inside an Anthropic `signature`), it is sealed with
 * sealOpaque so the next turn can tell whose it is.
 */
export type ReasoningPart = {
  type: "reasoning";
  text: string;
  origin: string | null;
  opaque?: string;
  /** Anthropic redacted_thinking: no text, only `opaque` */
  redacted?: boolean;
  /** the provider's id for the item (Responses reasoning items have one) */
  id?: string;
};

/** `arguments` is the JSON text as the model produced it (it may be invalid: never parsed where not needed). */
export type ToolCallPart = { type: "tool_call"; id: string; name: string; arguments: string };

export type ToolResultPart = {
  type: "tool_result";
  callId: string;
  content: string | Array<TextPart | ImagePart>;
  isError?: boolean;
  cache?: CacheHint;
};

export type Part = TextPart | ImagePart | ReasoningPart | ToolCallPart | ToolResultPart;

export interface IrMessage {
  role: "user" | "assistant";
  parts: Part[];
}

export interface IrTool {
  name: string;
  description?: string;
  /** JSON Schema of the arguments */
  parameters: Record<string, unknown>;
  strict?: boolean;
  cache?: CacheHint;
}

export type IrToolChoice = { type: "auto" } | { type: "none" } | { type: "required" } | { type: "tool"; name: string };

export interface IrRequest {
  /** the upstream's model id (the seam sets it) */
  model: string;
  /** system prompt / instructions, in order */
  system: TextPart[];
  messages: IrMessage[];
  tools: IrTool[];
  toolChoice?: IrToolChoice;
  parallelToolCalls?: boolean;
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  stop?: string[];
  /** thinking / reasoning asked for: an effort, a budget of tokens, or both (each codec maps to its nearest) */
  reasoning?: { effort?: "minimal" | "low" | "medium" | "high"; budgetTokens?: number };
  /** structured output */
  responseFormat?:
    | { type: "json_object" }
    | { type: "json_schema"; name: string; schema: Record<string, unknown>; strict?: boolean };
  stream: boolean;
  /** an end-user id for the provider's abuse monitoring (harmless to drop) */
  user?: string;
  /** hosted tool types the client offered that the target cannot run: left out, named in the answer's headers */
  droppedTools?: string[];
}

/**
 * Token counts as the client is told them. `input` counts every prompt token, cached ones included (chat's
 * prompt_tokens); Anthropic's input_tokens is input − cacheRead − cacheWrite. `output` includes `reasoning`.
 */
export interface IrUsage {
  input: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
  reasoning: number;
}

export interface IrAnswer {
  id: string;
  model: string;
  parts: Array<TextPart | ReasoningPart | ToolCallPart>;
  stop: StopReason;
  stopSequence?: string | null;
  usage: IrUsage | null;
}

/**
 * One step of a streamed answer, in order: start, then for each part part_start → delta* → part_end (parts never
 * interleave: a decoder whose upstream interleaves them closes one before opening the next), then exactly one
 * terminal event, finish or error. A stream that ends without a terminal event ended early: the seam sends the
 * client protocol's error event for it.
 */
export type IrEvent =
  | { type: "start"; id: string; model: string; usage?: IrUsage | null }
  | {
      type: "part_start";
      index: number;
      part:
        | { type: "text" }
        | { type: "reasoning"; origin: string | null; id?: string; redacted?: boolean; opaque?: string }
        | { type: "tool_call"; id: string; name: string };
    }
  | { type: "delta"; index: number; text?: string; reasoning?: string; arguments?: string; opaque?: string }
  | { type: "part_end"; index: number }
  | { type: "finish"; stop: StopReason; stopSequence?: string | null; usage: IrUsage | null }
  | { type: "error"; status: number; code: string; message: string };

/** The IrEvent of one type, for the handler of that type. */
export type IrEventOf<Type extends IrEvent["type"]> = Extract<IrEvent, { type: Type }>;

/** A request field that cannot be carried to the target without changing the answer asked for: a 400 naming it. */
export class TranslationError extends Error {
  constructor(
    message: string,
    readonly param?: string,
  ) {
    super(message);
    this.name = "TranslationError";
  }
}

/** What a codec may know about the other side of the call. */
export interface TranslateTarget {
  /** the provider the request goes to (providers.ts name) */
  provider: string;
  /** the upstream's model id: its reasoning's origin names it (originOf); absent, the origin is the provider alone */
  model?: string;
  /** the provider's options for its protocol (providers.ts `dialect`), e.g. where chat puts reasoning */
  dialect: Record<string, unknown>;
}

/** The client side of a protocol: what it accepts and how answers are written back in it. */
export interface ClientCodec {
  decodeRequest(body: Record<string, any>): IrRequest;
  /** the JSON answer in this protocol; `request` is the client's own body (Responses echoes some of its fields) */
  encodeAnswer(answer: IrAnswer, request: Record<string, any>): Record<string, unknown>;
  /**
   * a stream writer: each IrEvent becomes this protocol's SSE text (possibly "" or several events); `requestId` goes
   * into an error event where the protocol's errors carry it, as the gateway's own errors do
   */
  streamEncoder(request: Record<string, any>, requestId?: string): { write(e: IrEvent): string };
}

/** The upstream side of a protocol: how a request is written for a provider and how its answers are read. */
export interface UpstreamCodec {
  encodeRequest(request: IrRequest, target: TranslateTarget): Record<string, unknown>;
  decodeAnswer(json: any, target: TranslateTarget): IrAnswer;
  /** a stream reader fed parsed SSE events (eventsource-parser's `event` and `data`); `end` when the upstream closed */
  streamDecoder(target: TranslateTarget): {
    feed(event: string | undefined, data: string): IrEvent[];
    end(): IrEvent[];
  };
}

/**
 * Whose reasoning an upstream writes and may be sent back: "provider~model" with the model id base64url-encoded (a
 * seal's origin ends at its first ".", which model ids contain), or the provider alone when the model is not known.
 */
export function originOf(target: Pick<TranslateTarget, "provider" | "model">): string {
  return target.model ? `${target.provider}~${Buffer.from(target.model).toString("base64url")}` : target.provider;
}

/** The provider an origin names (originOf's first half). */
export function providerOf(origin: string): string {
  const mark = origin.indexOf("~");
  return mark === -1 ? origin : origin.slice(0, mark);
}

const SEAL = "sy1.";

/** Marks an opaque reasoning value with the provider it belongs to, for a client protocol that carries it. */
export function sealOpaque(origin: string, value: string): string {
  return `${SEAL}${origin}.${value}`;
}

/** The provider and value of a sealed opaque value; null when it is not one of ours (then it is the client protocol's own). */
export function openOpaque(sealed: string): { origin: string; value: string } | null {
  if (!sealed.startsWith(SEAL)) return null;
  const dot = sealed.indexOf(".", SEAL.length);
  if (dot === -1) return null;
  return { origin: sealed.slice(SEAL.length, dot), value: sealed.slice(dot + 1) };
}
