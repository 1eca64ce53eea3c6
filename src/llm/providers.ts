// The upstream table: for each provider, where each client-facing LLM path goes and how to authenticate there.
// Built once at startup from the settings (src/settings.ts), so the hot path only does Map lookups and picks a key.
//
// Base URLs follow each vendor SDK's convention:
//   anthropic  ANTHROPIC_BASE_URL has no /v1; the client's path (/v1/messages, /v1/messages/count_tokens) is appended
//   openai     OPENAI_BASE_URL ends in /v1; /v1/X → {base}/X
//   gemini     GEMINI_BASE_URL is the API root; its OpenAI-compatible API lives at {root}/v1beta/openai/X
//   xai        XAI_BASE_URL ends in /v1; /v1/X → {base}/X
//   deepseek   DEEPSEEK_BASE_URL has no /v1; chat completions at {base}/chat/completions (DeepSeek models are sold on
//              /v1/responses and translated, see deepseek.ts, so they always go to the chat URL)

export interface Provider {
  name: string;
  /** upstream URL by client-facing path; a path missing here is one the provider does not serve */
  urls: Map<string, string>;
  /** client paths this provider answers through the Responses → Chat Completions translator (deepseek.ts) */
  translated: Set<string>;
  /** per key, the auth header pair ready to use (built once) */
  auth: Array<[name: string, value: string]>;
  /** round-robin cursor over `auth` */
  cursor: number;
}

interface ProviderSpec {
  keyVar: string;
  baseVar: string;
  /** maps a client path (/v1/...) to the upstream URL */
  url: (base: string, path: string) => string;
  bearer: boolean;
  /** client paths served by translation rather than passed through */
  translated?: string[];
}

const openAiStyle = (base: string, path: string) => base + path.slice("/v1".length);

const SPECS: Record<string, ProviderSpec> = {
  anthropic: { keyVar: "ANTHROPIC_API_KEY", baseVar: "ANTHROPIC_BASE_URL", url: (b, p) => b + p, bearer: false },
  openai: { keyVar: "OPENAI_API_KEY", baseVar: "OPENAI_BASE_URL", url: openAiStyle, bearer: true },
  gemini: { keyVar: "GEMINI_API_KEY", baseVar: "GEMINI_BASE_URL", url: (b, p) => b + "/v1beta/openai" + p.slice("/v1".length), bearer: true },
  xai: { keyVar: "XAI_API_KEY", baseVar: "XAI_BASE_URL", url: openAiStyle, bearer: true },
  deepseek: { keyVar: "DEEPSEEK_API_KEY", baseVar: "DEEPSEEK_BASE_URL", url: (b) => b + "/chat/completions", bearer: true, translated: ["/v1/responses"] },
};

const PATHS: Record<string, string[]> = {
  anthropic: ["/v1/messages", "/v1/messages/count_tokens"],
  openai: ["/v1/chat/completions", "/v1/responses", "/v1/embeddings"],
  gemini: ["/v1/chat/completions", "/v1/embeddings"],
  xai: ["/v1/chat/completions", "/v1/responses"],
  deepseek: ["/v1/responses", "/v1/chat/completions"],
};

export type Providers = Map<string, Provider>;

/** Splits a key setting into its keys (comma-separated, blanks ignored). */
export function splitKeys(value: string | undefined): string[] {
  return (value ?? "").split(",").map((k) => k.trim()).filter(Boolean);
}

export function buildProviders(raw: Record<string, string | undefined>): Providers {
  const out: Providers = new Map();
  for (const [name, spec] of Object.entries(SPECS)) {
    const base = (raw[spec.baseVar] ?? "").replace(/\/+$/, "");
    const urls = new Map(PATHS[name]!.map((p) => [p, spec.url(base, p)]));
    const auth = splitKeys(raw[spec.keyVar]).map((k): [string, string] => (spec.bearer ? ["authorization", `Bearer ${k}`] : ["x-api-key", k]));
    out.set(name, { name, urls, translated: new Set(spec.translated), auth, cursor: 0 });
  }
  return out;
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
