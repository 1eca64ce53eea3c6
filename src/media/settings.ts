// The media engine's settings, read from the settings table's raw values (config.raw). Plain data, so the main
// thread can hand them to a Bun Worker in a message. An upstream without a key refuses every submission, and the
// route fails over.

import type { Level } from "../log";

export interface MediaSettings {
  databaseUrl: string;
  redisUrl?: string;
  catalogPath?: string;
  logLevel: Level;
  publicBaseUrl: string;
  defaultMaxConcurrentTasks: number;
  upstreams: {
    kie: { base: string; key?: string };
    fal: { base: string; key?: string };
    replicate: { base: string; key?: string };
    openai: { base: string; key?: string };
    gemini: { base: string; key?: string };
  };
  workers: number;
  leaseMs: number;
  pollScale: number;
  maxDeadlineSeconds?: number;
  housekeepingMs: number;
  callbacks: { allowPrivate: boolean; maxAttempts: number; retryBaseMs: number; timeoutMs: number };
  /** URLs the upstreams hand over (result files, fal's status URLs): fetched through upstream-fetch.ts's guard. */
  upstreamUrls: { allowPrivate: boolean };
  /** Input URLs the upstream is to fetch: those naming a non-public address are refused at creation unless allowed. */
  inputUrls: { allowPrivate: boolean };
  storage: {
    dir: string;
    s3?: { bucket: string; endpoint?: string; region?: string; accessKeyId?: string; secretAccessKey?: string };
  };
  retentionMs: number;
  /** RESULT_RETENTION_DAYS as given (decimals allowed), for the pages that state it */
  retentionDays: number;
  /** the largest result file copied from an upstream */
  maxFileBytes: number;
  /** SECRETS_KEY, for the workers to open the webhook signing keys they sign callbacks with */
  secretsKey?: string;
}

type Raw = Record<string, string | undefined>;
/** What the media settings take from the gateway's parsed Config besides the raw table. */
interface MediaBase {
  publicBaseUrl: string;
  databaseUrl: string;
  redisUrl?: string;
  catalogPath?: string;
  logLevel: MediaSettings["logLevel"];
  defaultMaxConcurrentTasks: number;
}

const trim = (u: string) => u.replace(/\/+$/, "");

export function mediaSettings(raw: Raw, base: MediaBase): MediaSettings {
  // `raw` comes from loadConfig, which has applied every default of the settings table (src/settings.ts).
  const num = (name: string) => Number(raw[name]);
  return {
    ...base,
    upstreams: {
      kie: { base: trim(raw.KIE_BASE_URL!), key: raw.KIE_API_KEY },
      fal: { base: trim(raw.FAL_BASE_URL!), key: raw.FAL_KEY },
      replicate: { base: trim(raw.REPLICATE_BASE_URL!), key: raw.REPLICATE_API_TOKEN },
      openai: { base: trim(raw.OPENAI_BASE_URL!), key: raw.OPENAI_API_KEY },
      gemini: { base: trim(raw.GEMINI_BASE_URL!), key: raw.GEMINI_API_KEY },
    },
    workers: num("MEDIA_WORKERS"),
    leaseMs: num("MEDIA_LEASE_SECONDS") * 1000,
    pollScale: num("MEDIA_POLL_SCALE"),
    maxDeadlineSeconds: raw.MEDIA_MAX_DEADLINE_SECONDS ? Number(raw.MEDIA_MAX_DEADLINE_SECONDS) : undefined,
    housekeepingMs: num("MEDIA_HOUSEKEEPING_SECONDS") * 1000,
    callbacks: {
      allowPrivate: raw.CALLBACK_ALLOW_PRIVATE === "true" || raw.CALLBACK_ALLOW_PRIVATE === "1",
      maxAttempts: num("CALLBACK_MAX_ATTEMPTS"),
      retryBaseMs: num("CALLBACK_RETRY_BASE_MS"),
      timeoutMs: 15_000, // kie's documented callback timeout; receivers are written against it
    },
    upstreamUrls: {
      allowPrivate: raw.UPSTREAM_URLS_ALLOW_PRIVATE === "true" || raw.UPSTREAM_URLS_ALLOW_PRIVATE === "1",
    },
    inputUrls: {
      allowPrivate: raw.INPUT_URLS_ALLOW_PRIVATE === "true" || raw.INPUT_URLS_ALLOW_PRIVATE === "1",
    },
    storage: {
      dir: raw.STORAGE_DIR!,
      s3: raw.S3_BUCKET
        ? {
            bucket: raw.S3_BUCKET,
            endpoint: raw.S3_ENDPOINT,
            region: raw.S3_REGION,
            accessKeyId: raw.S3_ACCESS_KEY_ID,
            secretAccessKey: raw.S3_SECRET_ACCESS_KEY,
          }
        : undefined,
    },
    retentionMs: Math.round(num("RESULT_RETENTION_DAYS") * 86_400_000),
    retentionDays: num("RESULT_RETENTION_DAYS"),
    maxFileBytes: num("RESULT_MAX_FILE_MB") * 1024 * 1024,
    secretsKey: raw.SECRETS_KEY,
  };
}

/** The settings of a running gateway (config.ts's Config). */
export function mediaSettingsOf(config: MediaBase & { raw: Raw }, overrides: Raw = {}): MediaSettings {
  const { raw, publicBaseUrl, databaseUrl, redisUrl, catalogPath, logLevel, defaultMaxConcurrentTasks } = config;
  return mediaSettings(
    { ...raw, ...overrides },
    { publicBaseUrl, databaseUrl, redisUrl, catalogPath, logLevel, defaultMaxConcurrentTasks },
  );
}

/** Tokens outlive three housekeeping rounds, so a live task's token is always refreshed before it lapses. */
export function tokenTtlMs(settings: MediaSettings): number {
  return Math.max(3 * settings.housekeepingMs, 30_000);
}
