import type { BodyLimits } from "./http/body-limits";
import type { Level } from "./log";
import { parseRateSpec, settings, type Setting } from "./settings";

// Every environment setting, parsed and validated once at startup (see settings.ts for the list).

export interface Config {
  port: number;
  host: string;
  databaseUrl: string;
  dialect: "sqlite" | "pg";
  redisUrl?: string;
  adminToken?: string;
  publicBaseUrl: string;
  catalogPath?: string;
  /** CATALOG_DAY: the day model lifecycles are judged on (unset: today) */
  catalogDay?: string;
  defaultRateLimit: { requests: number; windowSeconds: number };
  defaultMaxConcurrentTasks: number;
  /** DATABASE_POOL_SIZE: Postgres connections of this process */
  databasePoolSize: number;
  holdTtlSeconds: number;
  floatIdleMs: number;
  ledgerCommitIntervalMs: number;
  /** REQUEST_BODY_TIMEOUT_SECONDS and MAX_REQUEST_BODY_MB: how long a request body may take to arrive, and how large it may be (http/body-limits.ts) */
  body: BodyLimits;
  sweepIntervalSeconds: number;
  logLevel: Level;
  /** TRUSTED_PROXY_HOPS: X-Forwarded-For entries a client address is taken from the right (http/client-address.ts) */
  trustedProxyHops: number;
  /** PUBLIC_RATE_LIMIT: requests per client address to each public endpoint that works without a key */
  publicRateLimit: { requests: number; windowSeconds: number };
  /** SECRETS_KEY: seals webhook signing keys at rest (accounts/secret-box.ts) */
  secretsKey?: string;
  /** METRICS_TOKEN: the bearer token /metrics asks for; unset, /metrics is open */
  metricsToken?: string;
  /** SHUTDOWN_GRACE_SECONDS, in ms */
  shutdownGraceMs: number;
  /** BUN_CONFIG_MAX_HTTP_REQUESTS: upstream requests Bun lets out at once (it reads the variable itself; 256 unset) */
  upstreamRequestSlots: number;
  /**
   * Every setting's raw value, for a feature's own typed reader of its rows of the table (media/settings.ts,
   * dashboard/settings.ts, llm/providers.ts); features read those, not this.
   */
  raw: Record<string, string | undefined>;
}

export class ConfigError extends Error {}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const raw: Record<string, string | undefined> = {};
  const problems: string[] = [];
  for (const s of settings) {
    const value = env[s.name] === undefined || env[s.name] === "" ? s.default : env[s.name];
    if (value === undefined) continue;
    const problem = checkValue(s, value);
    if (problem)
      problems.push(
        `${s.name}=${s.kind === "secret" ? "<hidden>" : JSON.stringify(withoutCredentials(value))}: ${problem}`,
      );
    raw[s.name] = value;
  }
  if (problems.length) throw new ConfigError(`Invalid configuration:\n  ${problems.join("\n  ")}`);

  const port = Number(raw.PORT);
  const databaseUrl = raw.DATABASE_URL!;
  return {
    port,
    host: raw.HOST!,
    databaseUrl,
    dialect: /^postgres(ql)?:\/\//i.test(databaseUrl) ? "pg" : "sqlite",
    redisUrl: raw.REDIS_URL,
    adminToken: raw.ADMIN_TOKEN,
    publicBaseUrl: (raw.PUBLIC_BASE_URL ?? `http://localhost:${port}`).replace(/\/+$/, ""),
    catalogPath: raw.CATALOG_PATH,
    catalogDay: raw.CATALOG_DAY,
    defaultRateLimit: parseRateSpec(raw.DEFAULT_RATE_LIMIT!),
    defaultMaxConcurrentTasks: Number(raw.DEFAULT_MAX_CONCURRENT_TASKS),
    databasePoolSize: Number(raw.DATABASE_POOL_SIZE),
    holdTtlSeconds: Number(raw.HOLD_TTL_SECONDS),
    floatIdleMs: Number(raw.LEDGER_FLOAT_IDLE_MS),
    ledgerCommitIntervalMs: Number(raw.LEDGER_COMMIT_INTERVAL_MS),
    sweepIntervalSeconds: Number(raw.SWEEP_INTERVAL_SECONDS),
    body: { seconds: Number(raw.REQUEST_BODY_TIMEOUT_SECONDS), maxBytes: Number(raw.MAX_REQUEST_BODY_MB) * 1024 ** 2 },
    logLevel: raw.LOG_LEVEL as Config["logLevel"],
    trustedProxyHops: Number(raw.TRUSTED_PROXY_HOPS),
    publicRateLimit: parseRateSpec(raw.PUBLIC_RATE_LIMIT!),
    secretsKey: raw.SECRETS_KEY,
    metricsToken: raw.METRICS_TOKEN,
    shutdownGraceMs: Number(raw.SHUTDOWN_GRACE_SECONDS) * 1000,
    upstreamRequestSlots: Number(raw.BUN_CONFIG_MAX_HTTP_REQUESTS ?? BUN_DEFAULT_REQUEST_SLOTS),
    raw,
  };
}

/** A value as it may be printed: a URL's user and password (DATABASE_URL, REDIS_URL) replaced by `***`. */
/**
 * A URL as it may be printed: what stands before its last `@` hidden (a password may hold `#`, `/` or `?` unescaped,
 * which end the user-info part for a URL parser but not for the person who typed it; a mistyped `postgres:/` has
 * one slash), a `password=` parameter hidden, and all of it but the scheme when it does not parse (`redis://:hunter2`
 * has its password where the host would be).
 */
/** Bun's own limit on fetches in flight when BUN_CONFIG_MAX_HTTP_REQUESTS is unset. */
export const BUN_DEFAULT_REQUEST_SLOTS = 256;
/** Below this many slots a gateway serving long streams queues calls behind them: startup warns. */
export const FEW_REQUEST_SLOTS = 1024;

export function withoutCredentials(value: string): string {
  const m = /^([a-z][a-z0-9+.-]*:\/+)(.*)$/is.exec(value);
  if (!m) return value;
  const at = m[2]!.lastIndexOf("@");
  const rest = at >= 0 ? `***@${m[2]!.slice(at + 1)}` : m[2]!;
  const shown = `${m[1]}${rest}`.replace(/([?&](?:password|passwd|pass|pwd)=)[^&#]*/gi, "$1***");
  return at >= 0 || URL.parse(value)?.hostname ? shown : `${m[1]}<hidden>`;
}

function checkValue(s: Setting, value: string): string | undefined {
  switch (s.kind) {
    case "int":
      if (!/^\d+$/.test(value)) return "must be a whole number";
      break;
    case "bool":
      if (!["true", "false", "1", "0"].includes(value)) return "must be true or false";
      break;
    case "url": {
      // Every URL setting but REDIS_URL names an HTTP service: a typo such as `htp://` or `localhost:3000` (read as
      // the scheme `localhost:`) would otherwise surface only at the first request, or in users' links.
      const schemes = s.schemes ?? ["http:", "https:"];
      let protocol: string;
      try {
        protocol = new URL(value).protocol;
      } catch {
        return "must be a URL";
      }
      if (!schemes.includes(protocol)) return `must be a ${schemes.map((x) => x + "//").join(" or ")} URL`;
      break;
    }
  }
  return s.check?.(value);
}
