// The upstream table: for each provider, how a call is forwarded there and how to authenticate. Built once at
// startup from the settings (src/settings.ts), so the hot path only does Map lookups and picks a key. A call on the
// protocol a provider speaks for a model passes through as bytes; any other is translated (llm/translated.ts).

import type { LlmEndpoint, LlmModel } from "../catalog/model";

export interface Provider {
  name: string;
  /** upstream URL by the path of the protocol spoken there; a path missing here is one the provider does not serve */
  urls: Map<string, string>;
  /** the protocol's path it speaks for every model, whatever the catalog's endpoint; null: the model's endpoint */
  speaks: LlmEndpoint | null;
  /** options of the codec that writes its protocol (translate/<protocol>.ts documents each key) */
  dialect: Record<string, unknown>;
  /** per key, the auth header pair ready to use (built once) */
  auth: Array<[name: string, value: string]>;
  /** round-robin cursor over `auth` */
  cursor: number;
}

interface ProviderSpec {
  keyVar: string;
  baseVar: string;
  /** maps a protocol path (/v1/...) to the upstream URL */
  url: (base: string, path: string) => string;
  bearer: boolean;
  /** the protocol paths served there */
  paths: string[];
  speaks?: LlmEndpoint;
  dialect?: Record<string, unknown>;
}

// Base URLs follow each vendor SDK's convention: ANTHROPIC_BASE_URL and DEEPSEEK_BASE_URL have no /v1 (the path is
// appended; DeepSeek's chat completions at {base}/chat/completions); OPENAI_BASE_URL and XAI_BASE_URL end in /v1
// (/v1/X → {base}/X); GEMINI_BASE_URL is the API root, its OpenAI-compatible API at {root}/v1beta/openai/X.
const openAiStyle = (base: string, path: string) => base + path.slice("/v1".length);

const SPECS: Record<string, ProviderSpec> = {
  anthropic: {
    keyVar: "ANTHROPIC_API_KEY",
    baseVar: "ANTHROPIC_BASE_URL",
    url: (b, p) => b + p,
    bearer: false,
    paths: ["/v1/messages", "/v1/messages/count_tokens"],
  },
  openai: {
    keyVar: "OPENAI_API_KEY",
    baseVar: "OPENAI_BASE_URL",
    url: openAiStyle,
    bearer: true,
    paths: ["/v1/chat/completions", "/v1/responses", "/v1/embeddings"],
    dialect: { maxTokensField: "max_completion_tokens", reasoningEffort: true },
  },
  gemini: {
    keyVar: "GEMINI_API_KEY",
    baseVar: "GEMINI_BASE_URL",
    url: (b, p) => b + "/v1beta/openai" + p.slice("/v1".length),
    bearer: true,
    paths: ["/v1/chat/completions", "/v1/embeddings"],
    // Gemini 3 wants each tool call's thought signature back (a skip placeholder for calls another model made).
    dialect: { maxTokensField: "max_tokens", reasoningEffort: true, thoughtSignatures: true },
  },
  xai: {
    keyVar: "XAI_API_KEY",
    baseVar: "XAI_BASE_URL",
    url: openAiStyle,
    bearer: true,
    paths: ["/v1/chat/completions", "/v1/responses"],
  },
  deepseek: {
    keyVar: "DEEPSEEK_API_KEY",
    baseVar: "DEEPSEEK_BASE_URL",
    url: (b) => b + "/chat/completions",
    bearer: true,
    paths: ["/v1/chat/completions"],
    speaks: "/v1/chat/completions",
    // DeepSeek's reasoner returns reasoning_content and wants it back on tool turns; no reasoning_effort, no images.
    dialect: {
      maxTokensField: "max_tokens",
      reasoningField: "reasoning_content",
      reasoningEffort: false,
      images: false,
    },
  },
};

export type Providers = Map<string, Provider>;

/** The output-token field `provider`'s own Chat Completions API takes (a native call's body goes to it as written). */
export function chatMaxTokensField(provider: string): "max_tokens" | "max_completion_tokens" {
  return SPECS[provider]?.dialect?.maxTokensField === "max_completion_tokens" ? "max_completion_tokens" : "max_tokens";
}

/** Splits a key setting into its keys (comma-separated, blanks ignored). */
export function splitKeys(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((k) => k.trim())
    .filter(Boolean);
}

export function buildProviders(raw: Record<string, string | undefined>): Providers {
  const out: Providers = new Map();
  for (const [name, spec] of Object.entries(SPECS)) {
    const base = (raw[spec.baseVar] ?? "").replace(/\/+$/, "");
    const urls = new Map(spec.paths.map((p) => [p, spec.url(base, p)]));
    const auth = splitKeys(raw[spec.keyVar]).map((k): [string, string] =>
      spec.bearer ? ["authorization", `Bearer ${k}`] : ["x-api-key", k],
    );
    out.set(name, { name, urls, speaks: spec.speaks ?? null, dialect: spec.dialect ?? {}, auth, cursor: 0 });
  }
  return out;
}

/**
 * What a model refuses that its provider's protocol allows, as dialect keys laid over the provider's row for that
 * model (dialectFor). Each field is dropped rather than refused: a sampling value or an effort the model cannot
 * honour changes nothing it would do, and peers drop them too, while the upstream's 400 would fail a call an agent
 * cannot repair. Whether a model reasons comes from its catalog capabilities ("reasoning" or "thinking").
 */
interface ModelRule {
  /** a provider name, or "*" for every provider */
  provider: string;
  applies(model: LlmModel): boolean;
  dialect: Record<string, unknown>;
}

const reasons = (m: LlmModel) => m.capabilities.includes("reasoning") || m.capabilities.includes("thinking");

const MODEL_RULES: ModelRule[] = [
  // A model that does not reason (GPT-4.x, Claude Haiku 3.5) refuses reasoning.effort / thinking: none is sent.
  { provider: "*", applies: (m) => !reasons(m), dialect: { reasoning: false } },
  // OpenAI's reasoning models (the GPT-5 family, o-series) refuse a temperature or top_p other than the default.
  { provider: "openai", applies: reasons, dialect: { sampling: false } },
  // xAI's grok-4 family (grok-4, -fast, code-fast, 4.20) reasons at a fixed effort and refuses reasoning_effort;
  // grok-3-mini and grok-4.3 take one.
  {
    provider: "xai",
    applies: (m) => !/^grok-(3-mini|4\.3)/.test(m.upstream_model),
    dialect: { reasoningEffort: false },
  },
];

/** The codec options for a call to `model` at `provider`: the provider's dialect with the model's rules over it. */
export function dialectFor(provider: Provider, model: LlmModel): Record<string, unknown> {
  let dialect = provider.dialect;
  for (const rule of MODEL_RULES) {
    if ((rule.provider === "*" || rule.provider === provider.name) && rule.applies(model))
      dialect = { ...dialect, ...rule.dialect };
  }
  return dialect;
}

/** The path of the protocol `provider` speaks for a model whose catalog endpoint is `endpoint`. */
export function spokenPath(provider: Provider, endpoint: LlmEndpoint): LlmEndpoint {
  return provider.speaks ?? endpoint;
}

/** The next key's header pair, in turn. Callers check `auth.length` first. */
export function nextAuth(p: Provider): [string, string] {
  const a = p.auth[p.cursor % p.auth.length]!;
  p.cursor = (p.cursor + 1) % p.auth.length;
  return a;
}

/** Setting name of a provider's keys, for error messages ("set OPENAI_API_KEY"). */
export function keySettingOf(provider: string): string {
  return SPECS[provider]?.keyVar ?? `${provider.toUpperCase()}_API_KEY`;
}
