// The table of every environment setting. config.ts parses them once at startup; the README's settings table is
// checked against this list by a test, so a setting cannot exist without being documented.
// A feature adds its settings here (one row each) rather than reading process.env itself.

export type SettingKind = "int" | "string" | "url" | "bool" | "secret" | "list";

export interface Setting {
  name: string;
  kind: SettingKind;
  default?: string;
  doc: string;
  /** Extra validation beyond the kind; return an error message or undefined. */
  check?: (value: string) => string | undefined;
}

export const settings: Setting[] = [
  { name: "PORT", kind: "int", default: "3000", doc: "HTTP port to listen on.", check: (v) => (+v >= 0 && +v <= 65535 ? undefined : "must be 0-65535") },
  { name: "HOST", kind: "string", default: "0.0.0.0", doc: "Interface to bind." },
  {
    name: "DATABASE_URL",
    kind: "string",
    default: "./data/switchyard.sqlite",
    doc: "SQLite file path (created if missing; `:memory:` for a throwaway database) or a `postgres://` URL.",
    check: (v) => (/^[a-z]+:\/\//i.test(v) && !/^postgres(ql)?:\/\//i.test(v) ? "must be a file path or a postgres:// URL" : undefined),
  },
  { name: "REDIS_URL", kind: "url", doc: "Optional `redis://` URL. When set, rate limits and task concurrency tokens live in Redis and hold across processes." },
  { name: "ADMIN_TOKEN", kind: "secret", doc: "Bearer token for the admin API under `/admin/v1`. Unset: the admin API answers 403 (the CLI still works).", check: (v) => (v.length >= 16 ? undefined : "must be at least 16 characters") },
  { name: "PUBLIC_BASE_URL", kind: "url", doc: "The address users reach the gateway at; used in links, result URLs and discovery documents. Default `http://localhost:$PORT`." },
  { name: "CATALOG_PATH", kind: "string", doc: "Optional JSON file of model entries that extend or override the built-in catalog (matched by `id`)." },
  { name: "DEFAULT_RATE_LIMIT", kind: "string", default: "5/10s", doc: "Requests per window for keys without their own limit, as `N/Ss` (e.g. `5/10s`).", check: (v) => (/^\d+\/\d+s$/.test(v) ? undefined : "must look like 5/10s") },
  { name: "DEFAULT_MAX_CONCURRENT_TASKS", kind: "int", default: "2", doc: "Running media tasks allowed per key without its own limit." },
  { name: "HOLD_TTL_SECONDS", kind: "int", default: "900", doc: "How long an LLM hold may stay pending before the sweeper releases it (a crash left it behind)." },
  { name: "SWEEP_INTERVAL_SECONDS", kind: "int", default: "30", doc: "How often expired holds are swept." },
  // LLM upstreams (issue 3). Base URLs follow each vendor SDK's own convention; a key setting may hold several
  // comma-separated keys, used in turn (see src/llm/providers.ts).
  { name: "ANTHROPIC_API_KEY", kind: "secret", doc: "Anthropic key(s), comma-separated to rotate. Unset: Anthropic models answer 503." },
  { name: "ANTHROPIC_BASE_URL", kind: "url", default: "https://api.anthropic.com", doc: "Anthropic API base, without `/v1` (as the Anthropic SDK's `baseURL`)." },
  { name: "OPENAI_API_KEY", kind: "secret", doc: "OpenAI key(s), comma-separated to rotate. Unset: OpenAI models answer 503." },
  { name: "OPENAI_BASE_URL", kind: "url", default: "https://api.openai.com/v1", doc: "OpenAI API base, with `/v1` (as the openai SDK's `baseURL`)." },
  { name: "GEMINI_API_KEY", kind: "secret", doc: "Google Gemini key(s), comma-separated to rotate. Unset: Gemini models answer 503." },
  { name: "GEMINI_BASE_URL", kind: "url", default: "https://generativelanguage.googleapis.com", doc: "Gemini API root; chat completions and embeddings are called under `/v1beta/openai/`." },
  { name: "XAI_API_KEY", kind: "secret", doc: "xAI key(s), comma-separated to rotate. Unset: Grok models answer 503." },
  { name: "XAI_BASE_URL", kind: "url", default: "https://api.x.ai/v1", doc: "xAI API base, with `/v1`." },
  { name: "DEEPSEEK_API_KEY", kind: "secret", doc: "DeepSeek key(s), comma-separated to rotate. Unset: DeepSeek models answer 503." },
  { name: "DEEPSEEK_BASE_URL", kind: "url", default: "https://api.deepseek.com", doc: "DeepSeek API base (chat completions at `{base}/chat/completions`)." },
  { name: "LOG_LEVEL", kind: "string", default: "info", doc: "`debug`, `info`, `warn` or `error`.", check: (v) => (["debug", "info", "warn", "error"].includes(v) ? undefined : "must be debug, info, warn or error") },
];
