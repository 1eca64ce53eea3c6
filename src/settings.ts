// The table of every environment setting. config.ts parses them once at startup; the README's settings table is
// checked against this list by a test, so a setting cannot exist without being documented.
// A feature adds its settings here (one row each) rather than reading process.env itself.

import { checkSecretsKey } from "./accounts/secret-box";
import { isDay } from "./catalog/lifecycle";

export type SettingKind = "int" | "string" | "url" | "bool" | "secret" | "list";

export interface Setting {
  name: string;
  kind: SettingKind;
  default?: string;
  doc: string;
  /** kind "url": the schemes allowed (default http: and https:) */
  schemes?: string[];
  /** Extra validation beyond the kind; return an error message or undefined. */
  check?: (value: string) => string | undefined;
}

/** "N/Ss" (e.g. 5/10s) → requests per window; the format of every rate-limit setting. */
export function parseRateSpec(v: string): { requests: number; windowSeconds: number } {
  const [requests, windowSeconds] = v.replace("s", "").split("/").map(Number);
  return { requests: requests!, windowSeconds: windowSeconds! };
}
// A window of 0 s would turn the limit off (every window is new), and one over a day is surely a typo.
const rateSpec = (example: string) => (v: string) => {
  if (!/^\d+\/\d+s$/.test(v)) return `must look like ${example}`;
  const { requests, windowSeconds } = parseRateSpec(v);
  if (requests < 1 || requests > 1_000_000_000) return "must allow from 1 to 1,000,000,000 requests";
  return windowSeconds >= 1 && windowSeconds <= 86_400 ? undefined : "must have a window of 1 to 86400 seconds";
};
const atLeastOne = (v: string) => (+v >= 1 ? undefined : "must be at least 1");
/** Bounds for a whole-number setting. Durations that become timers must stay under 2^31 ms: Bun (like Node) fires
 *  a longer timer after 1 ms. */
const between = (min: number, max: number) => (v: string) =>
  +v >= min && +v <= max ? undefined : `must be from ${min} to ${max}`;
const DAY_SECONDS = 86_400;

export const settings: Setting[] = [
  {
    name: "PORT",
    kind: "int",
    default: "3000",
    doc: "HTTP port to listen on.",
    check: (v) => (+v >= 0 && +v <= 65535 ? undefined : "must be 0-65535"),
  },
  { name: "HOST", kind: "string", default: "0.0.0.0", doc: "Interface to bind." },
  {
    name: "BUN_CONFIG_MAX_HTTP_REQUESTS",
    kind: "int",
    doc: "Read by Bun itself when the process starts: how many upstream requests (LLM calls, media submissions and downloads) may be in flight at once. Bun's default is 256, and calls beyond it wait for a free slot, however long the first ones stream. `bun start` and the Docker image set 16384; set it yourself when you run the binary (Bun allows up to 65535). The gateway warns at startup when it is unset or below 1024.",
    check: between(1, 65535),
  },
  {
    name: "DATABASE_URL",
    kind: "string",
    default: "./data/switchyard.sqlite",
    doc: "SQLite file path (created if missing; `:memory:` for a throwaway database) or a `postgres://` URL.",
    // A URL of another scheme, or a mistyped postgres URL (`postgres:/host`), would otherwise become a SQLite file name.
    check: (v) => {
      if ((/^[a-z]+:\/\//i.test(v) || /^postgres(ql)?:/i.test(v)) && !/^postgres(ql)?:\/\//i.test(v))
        return "must be a file path or a postgres:// URL";
      return undefined; // whether Bun.SQL can read a postgres URL is its to say (db/client.ts openPostgres)
    },
  },
  {
    name: "DATABASE_POOL_SIZE",
    kind: "int",
    default: "20",
    doc: "Postgres connections of the gateway process (Bun.SQL may open all of them at its first queries, not as load grows); each of its `MEDIA_WORKERS` opens 4 more, the CLI 2. 1 to 1000.",
    check: between(1, 1000),
  },
  {
    name: "REDIS_URL",
    kind: "url",
    schemes: ["redis:", "rediss:", "redis+tls:", "redis+unix:", "redis+tls+unix:", "valkey:", "valkeys:"],
    doc: "Optional `redis://` (or `rediss://`, `valkey://`, `redis+unix://`) URL. When set, rate limits and task concurrency tokens live in Redis and hold across processes.",
  },
  {
    name: "ADMIN_TOKEN",
    kind: "secret",
    doc: "Bearer token for the admin API under `/admin/v1`. Unset: the admin API answers 403 (the CLI still works).",
    check: (v) => (v.length >= 16 ? undefined : "must be at least 16 characters"),
  },
  {
    name: "PUBLIC_BASE_URL",
    kind: "url",
    doc: "The address users reach the gateway at; used in links, result URLs and discovery documents. Default `http://localhost:$PORT`.",
  },
  {
    name: "CATALOG_PATH",
    kind: "string",
    doc: "Optional JSON file of model entries that extend or override the built-in catalog (matched by `id`).",
  },
  {
    name: "CATALOG_DAY",
    kind: "string",
    doc: "Judge the catalog's model lifecycles as of this UTC day (`YYYY-MM-DD`) instead of today: a legacy model past its `retires_after` answers 410 from the next day. For tests and for replaying a day; leave unset in production.",
    check: (v) => (isDay(v) ? undefined : "must be a date written YYYY-MM-DD"),
  },
  {
    name: "DEFAULT_RATE_LIMIT",
    kind: "string",
    default: "5/10s",
    doc: "Requests per window for keys without their own limit, as `N/Ss` (e.g. `5/10s`).",
    check: rateSpec("5/10s"),
  },
  {
    name: "DEFAULT_MAX_CONCURRENT_TASKS",
    kind: "int",
    default: "2",
    doc: "Running media tasks allowed per key without its own limit.",
  },
  {
    name: "HOLD_TTL_SECONDS",
    kind: "int",
    default: "900",
    doc: "How long an LLM hold or float may stay pending, unused, before the sweeper releases it (a crash left it behind); a float in use keeps moving its expiry ahead. 60 to 86400.",
    check: between(60, DAY_SECONDS),
  },
  {
    name: "LEDGER_FLOAT_IDLE_MS",
    kind: "int",
    default: "1000",
    doc: "How long a wallet's LLM float (credits this process reserves ahead for that wallet's next calls, shown as held) is kept after its last call before it goes back to the wallet. At most 3600000.",
    check: between(0, 3_600_000),
  },
  {
    name: "LEDGER_COMMIT_INTERVAL_MS",
    kind: "int",
    default: "10",
    doc: "How long finished LLM calls' usage records and charges may wait to be committed together (one transaction for all of them: fewer, larger commits cost less per call). A call waiting for credits, GET /v1/usage and shutdown start the commit at once; a full batch (512 calls) does not wait. A crash loses at most this interval's charges, and those of a commit under way (never overcharging anyone). 0 commits once per event-loop turn; at most 1000.",
    check: between(0, 1000),
  },
  {
    name: "SWEEP_INTERVAL_SECONDS",
    kind: "int",
    default: "30",
    doc: "How often expired holds are swept (1 to 86400).",
    check: between(1, DAY_SECONDS),
  },
  {
    name: "REQUEST_BODY_TIMEOUT_SECONDS",
    kind: "int",
    default: "30",
    doc: "How long a request's body may take to arrive once its headers have, plus a second per 64 KiB received (a body stated at up to 1 MiB: per 64 KiB stated); a slower one gets 408 `request_timeout` (1 to 255).",
    check: between(1, 255),
  },
  {
    name: "MAX_REQUEST_BODY_MB",
    kind: "int",
    default: "128",
    doc: "The largest request body accepted on the LLM and media task routes, in MiB; a larger one gets 413 `request_too_large` in its protocol's shape (1 to 1024). The admin API, the dashboard and the public endpoints take at most 1 MiB.",
    check: between(1, 1024),
  },
  {
    name: "SHUTDOWN_GRACE_SECONDS",
    kind: "int",
    default: "30",
    doc: "On SIGTERM/SIGINT: how long in-flight requests (streams included) and background workers may take to finish before they are cut off (at most 86400).",
    check: between(0, DAY_SECONDS),
  },
  {
    name: "SECRETS_KEY",
    kind: "secret",
    doc: "Optional key(s) that seal webhook signing keys at rest (AES-256-GCM): 32 random bytes in base64 (`openssl rand -base64 32`). Several, comma-separated and newest first, during a rotation: the first seals, all open. Unset: signing keys are stored as they are.",
    check: checkSecretsKey,
  },
  {
    name: "METRICS_TOKEN",
    kind: "secret",
    doc: "Optional bearer token for `/metrics`. Unset: `/metrics` is open (keep it on a private network).",
    check: (v) => (v.length >= 16 ? undefined : "must be at least 16 characters"),
  },
  {
    name: "SESSION_TTL_HOURS",
    kind: "int",
    default: "12",
    doc: "How long a dashboard sign-in lasts (1 to 8760).",
    check: between(1, 8_760),
  },
  {
    name: "LOGIN_RATE_LIMIT",
    kind: "string",
    default: "5/60s",
    doc: "Dashboard sign-in attempts allowed per email and IP address, as `N/Ss`.",
    check: rateSpec("5/60s"),
  },
  {
    name: "LOGIN_ADDRESS_RATE_LIMIT",
    kind: "string",
    default: "20/60s",
    doc: "Dashboard sign-in attempts allowed per IP address across all emails, as `N/Ss`.",
    check: rateSpec("20/60s"),
  },
  {
    name: "PUBLIC_RATE_LIMIT",
    kind: "string",
    default: "120/10s",
    doc: "Requests per client address to each public endpoint that works without a key (`POST /v1/credits/estimate`, `POST /v1/media/upstream-events/*`), as `N/Ss`.",
    check: rateSpec("120/10s"),
  },
  {
    name: "TRUSTED_PROXY_HOPS",
    kind: "int",
    default: "0",
    doc: "Reverse proxies in front of the gateway that append the client's address to `X-Forwarded-For`; the limits by address (dashboard sign-in, public endpoints) take the address that many entries from the right. `0`: the connection's address, header ignored (behind a proxy, every client then shares the proxy's address). An IPv6 address counts by its /64, an IPv4-mapped one as its IPv4 address.",
  },
  // Media tasks (src/media). Upstream keys are secrets: never logged, never shown.
  { name: "KIE_API_KEY", kind: "secret", doc: "kie.ai key for the Market and Suno APIs (most media models)." },
  { name: "KIE_BASE_URL", kind: "url", default: "https://api.kie.ai", doc: "kie.ai API base." },
  { name: "FAL_KEY", kind: "secret", doc: "fal.ai key for its queue API." },
  { name: "FAL_BASE_URL", kind: "url", default: "https://queue.fal.run", doc: "fal.ai queue base." },
  { name: "REPLICATE_API_TOKEN", kind: "secret", doc: "Replicate API token." },
  { name: "REPLICATE_BASE_URL", kind: "url", default: "https://api.replicate.com/v1", doc: "Replicate API base." },
  {
    name: "MEDIA_WORKERS",
    kind: "int",
    default: "1",
    doc: "Bun Workers that poll upstreams, store results and send callbacks; each loads its engine only once there is media work. `0` runs that work on the main thread (also used for `:memory:` databases).",
  },
  {
    name: "MEDIA_LEASE_SECONDS",
    kind: "int",
    default: "120",
    doc: "How long a worker owns a task while working on it; a crashed process's tasks are picked up after this. Renewed while a step runs. 1 to 86400.",
    check: between(1, DAY_SECONDS),
  },
  {
    name: "MEDIA_POLL_SCALE",
    kind: "string",
    default: "1",
    doc: "Multiplier on every provider's poll backoff (1 = kie's advice, 2 s growing to 30 s). Tests use `0.01`.",
    check: positiveDecimal,
  },
  {
    name: "MEDIA_MAX_DEADLINE_SECONDS",
    kind: "int",
    doc: "Optional cap on every model's deadline (a task still unfinished then fails and is refunded). At least 1; unset for no cap.",
    check: atLeastOne,
  },
  {
    name: "MEDIA_HOUSEKEEPING_SECONDS",
    kind: "int",
    default: "30",
    doc: "How often concurrency tokens of running tasks are refreshed and expired result files deleted (1 to 86400).",
    check: between(1, DAY_SECONDS),
  },
  {
    name: "CALLBACK_ALLOW_PRIVATE",
    kind: "bool",
    default: "false",
    doc: "Allow callback URLs that resolve to loopback, private, link-local or metadata addresses (tests, trusted networks).",
  },
  {
    name: "UPSTREAM_URLS_ALLOW_PRIVATE",
    kind: "bool",
    default: "false",
    doc: "Allow fetching URLs that media upstreams hand over (result files, fal's status URLs) from loopback, private, link-local or metadata addresses (tests, upstreams on a trusted network).",
  },
  {
    name: "INPUT_URLS_ALLOW_PRIVATE",
    kind: "bool",
    default: "false",
    doc: "Allow input URLs (source images, videos, audio) that name a loopback, private, link-local or metadata address, or localhost, for the upstream to fetch (upstreams on a trusted network).",
  },
  {
    name: "CALLBACK_MAX_ATTEMPTS",
    kind: "int",
    default: "6",
    doc: "Delivery attempts per callback before giving up.",
    check: atLeastOne,
  },
  {
    name: "CALLBACK_RETRY_BASE_MS",
    kind: "int",
    default: "15000",
    doc: "Wait before the first retry; doubles each time (6 attempts span about 8 minutes).",
  },
  {
    name: "STORAGE_DIR",
    kind: "string",
    default: "./data/files",
    doc: "Folder for task result files when S3 is not configured. Processes on several hosts must share it (or use S3): a file is served by whichever process gets the request.",
  },
  {
    name: "S3_BUCKET",
    kind: "string",
    doc: "Bucket for result files (S3-compatible, through Bun.s3). When set, files go there instead of `STORAGE_DIR`.",
  },
  { name: "S3_ENDPOINT", kind: "url", doc: "S3-compatible endpoint (R2, MinIO, ...); unset = AWS." },
  { name: "S3_REGION", kind: "string", doc: "S3 region." },
  { name: "S3_ACCESS_KEY_ID", kind: "secret", doc: "S3 access key id." },
  { name: "S3_SECRET_ACCESS_KEY", kind: "secret", doc: "S3 secret access key." },
  {
    name: "RESULT_MAX_FILE_MB",
    kind: "int",
    default: "2048",
    doc: "The largest result file the gateway copies from an upstream, in MiB (1 to 1048576); a larger one fails its download as it arrives, whether or not the upstream stated its length.",
    check: between(1, 1_048_576),
  },
  {
    name: "RESULT_RETENTION_DAYS",
    kind: "string",
    default: "14",
    doc: "Days result files are kept and served (decimals allowed); then they are deleted and the task record says so.",
    check: positiveDecimal,
  },
  // LLM upstreams (issue 3). Base URLs follow each vendor SDK's own convention; a key setting may hold several
  // comma-separated keys, used in turn (see src/llm/providers.ts).
  {
    name: "ANTHROPIC_API_KEY",
    kind: "secret",
    doc: "Anthropic key(s), comma-separated to rotate. Unset: Anthropic models answer 503.",
  },
  {
    name: "ANTHROPIC_BASE_URL",
    kind: "url",
    default: "https://api.anthropic.com",
    doc: "Anthropic API base, without `/v1` (as the Anthropic SDK's `baseURL`).",
  },
  {
    name: "OPENAI_API_KEY",
    kind: "secret",
    doc: "OpenAI key(s), comma-separated to rotate. Unset: OpenAI models answer 503.",
  },
  {
    name: "OPENAI_BASE_URL",
    kind: "url",
    default: "https://api.openai.com/v1",
    doc: "OpenAI API base, with `/v1` (as the openai SDK's `baseURL`).",
  },
  {
    name: "GEMINI_API_KEY",
    kind: "secret",
    doc: "Google Gemini key(s), comma-separated to rotate. Unset: Gemini models answer 503.",
  },
  {
    name: "GEMINI_BASE_URL",
    kind: "url",
    default: "https://generativelanguage.googleapis.com",
    doc: "Gemini API root; chat completions and embeddings are called under `/v1beta/openai/`.",
  },
  { name: "XAI_API_KEY", kind: "secret", doc: "xAI key(s), comma-separated to rotate. Unset: Grok models answer 503." },
  { name: "XAI_BASE_URL", kind: "url", default: "https://api.x.ai/v1", doc: "xAI API base, with `/v1`." },
  {
    name: "DEEPSEEK_API_KEY",
    kind: "secret",
    doc: "DeepSeek key(s), comma-separated to rotate. Unset: DeepSeek models answer 503.",
  },
  {
    name: "DEEPSEEK_BASE_URL",
    kind: "url",
    default: "https://api.deepseek.com",
    doc: "DeepSeek API base (chat completions at `{base}/chat/completions`).",
  },
  {
    name: "LLM_FIRST_BYTE_TIMEOUT_SECONDS",
    kind: "string",
    default: "900",
    doc: "The longest wait for an LLM upstream's response headers, in seconds (decimals allowed; more than 0, at most 86400). A non-streaming reasoning call may think for many minutes before it answers at all. Past it: 504 `upstream_timeout`, nothing charged.",
    check: timerSeconds,
  },
  {
    name: "LLM_SILENCE_TIMEOUT_SECONDS",
    kind: "string",
    default: "600",
    doc: "The longest an LLM upstream's answer may go without a byte once its headers have come, in seconds (decimals allowed; more than 0, at most 86400). Past it the call ends as `upstream_timeout`, nothing charged: a stream with its protocol's error event, an answer not yet sent with a 504.",
    check: timerSeconds,
  },
  {
    name: "LOG_LEVEL",
    kind: "string",
    default: "info",
    doc: "`debug`, `info`, `warn` or `error`.",
    check: (v) => (["debug", "info", "warn", "error"].includes(v) ? undefined : "must be debug, info, warn or error"),
  },
];

/** Seconds that become a timer: decimals allowed (tests use fractions), and under 2^31 ms (see `between`). */
function timerSeconds(v: string): string | undefined {
  return positiveDecimal(v) ?? (Number(v) <= DAY_SECONDS ? undefined : `must be at most ${DAY_SECONDS}`);
}

function positiveDecimal(v: string): string | undefined {
  return /^\d+(\.\d+)?$/.test(v) && Number(v) > 0 ? undefined : "must be a positive number";
}
