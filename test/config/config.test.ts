import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { ConfigError, loadConfig } from "../../src/config";
import { settings } from "../../src/settings";
import { creditsToMicros, decimalToInteger, usdPerMillionToMicrosPerToken, usdToMicros } from "../../src/ledger/units";

/** The message loadConfig stops with for `env`, or "" when it loads. */
function refused(env: Record<string, string>): string {
  try {
    loadConfig(env);
    return "";
  } catch (e) {
    return (e as Error).message;
  }
}

describe("configuration", () => {
  test("defaults give an embedded SQLite gateway with in-process limits", () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 3000,
      dialect: "sqlite",
      databaseUrl: "./data/switchyard.sqlite",
      redisUrl: undefined,
      defaultRateLimit: { requests: 5, windowSeconds: 10 },
      defaultMaxConcurrentTasks: 2,
    });
    expect(c.publicBaseUrl).toBe("http://localhost:3000");
    expect(loadConfig({ DATABASE_URL: "postgres://u@h/db" }).dialect).toBe("pg");
  });

  test("bad values stop startup with one message naming each, secrets hidden", () => {
    let err: Error | undefined;
    try {
      loadConfig({
        PORT: "http",
        REDIS_URL: "not a url",
        ADMIN_TOKEN: "short",
        DEFAULT_RATE_LIMIT: "5 per 10s",
        DATABASE_URL: "mysql://x",
      });
    } catch (e) {
      err = e as Error;
    }
    expect(err).toBeInstanceOf(ConfigError);
    for (const name of ["PORT", "REDIS_URL", "ADMIN_TOKEN", "DEFAULT_RATE_LIMIT", "DATABASE_URL"])
      expect(err!.message).toContain(name);
    expect(err!.message).not.toContain("short");
  });

  test("URL settings need their scheme: http(s) for services and public links, redis for REDIS_URL", () => {
    // `localhost:3000` parses as a URL of the scheme `localhost:`; links built from it would be useless.
    expect(refused({ PUBLIC_BASE_URL: "localhost:3000" })).toContain(
      'PUBLIC_BASE_URL="localhost:3000": must be a http:// or https:// URL',
    );
    expect(refused({ OPENAI_BASE_URL: "ftp://api.example.com/v1" })).toContain("OPENAI_BASE_URL");
    expect(refused({ PUBLIC_BASE_URL: "javascript:alert(1)" })).toContain("PUBLIC_BASE_URL");
    expect(refused({ REDIS_URL: "http://127.0.0.1:6379" })).toContain(
      'REDIS_URL="http://127.0.0.1:6379": must be a redis:// or rediss://',
    );
    // Each accepted form still loads.
    const acceptedForms: Array<Record<string, string>> = [
      { PUBLIC_BASE_URL: "https://gw.example.com/" },
      { REDIS_URL: "rediss://u:p@cache:6380/1" },
      { REDIS_URL: "valkey://cache:6379" },
      { REDIS_URL: "redis+unix:///run/redis.sock" },
    ];
    for (const env of acceptedForms) {
      expect(refused(env)).toBe("");
    }
    expect(loadConfig({ PUBLIC_BASE_URL: "https://gw.example.com/" }).publicBaseUrl).toBe("https://gw.example.com");
  });

  test("a database URL that fails the check is printed without its user and password", () => {
    const message = refused({ DATABASE_URL: "mysql://app:S3cretPW@db.internal/x" });
    expect(message).toContain("DATABASE_URL");
    expect(message).toContain("mysql://***@db.internal/x");
    expect(message).not.toContain("S3cretPW");
    expect(message).not.toContain("app:");
  });

  test("Postgres URLs without a host (the default host, or a Unix socket given by ?host=) are accepted, as Bun.SQL reads them", () => {
    for (const url of ["postgres:///postgres", "postgres://postgres@/postgres?host=/var/run/postgresql"])
      expect(loadConfig({ DATABASE_URL: url }).dialect).toBe("pg");
  });

  test("a password is never printed however the URL is mistyped: one slash, a `password=` parameter, unescaped `#`", () => {
    for (const url of [
      "postgres:/app:Sup3rSecret@db/app",
      "mysql://db.internal/x?user=app&password=Sup3rSecret",
      "mysql://app:Sup3r#Secret@db/x",
    ]) {
      const message = refused({ DATABASE_URL: url });
      expect([url, message.includes("DATABASE_URL"), message.includes("Sup3r"), message.includes("Secret")]).toEqual([
        url,
        true,
        false,
        false,
      ]);
    }
  });

  test("rate limits need a window of 1 s to a day (0 s would turn them off); timers stay under 2^31 ms", () => {
    for (const [name, value] of [
      ["DEFAULT_RATE_LIMIT", "5/0s"],
      ["LOGIN_RATE_LIMIT", "5/0s"],
      ["LOGIN_ADDRESS_RATE_LIMIT", "0/60s"],
      ["DEFAULT_RATE_LIMIT", "5/100000s"],
      ["SWEEP_INTERVAL_SECONDS", "0"],
      ["SWEEP_INTERVAL_SECONDS", "2592000"],
      ["SHUTDOWN_GRACE_SECONDS", "99999999"],
      ["HOLD_TTL_SECONDS", "0"],
      ["LEDGER_FLOAT_IDLE_MS", "99999999"],
      ["LEDGER_COMMIT_INTERVAL_MS", "1001"],
      ["LEDGER_COMMIT_INTERVAL_MS", "-1"],
      ["MEDIA_LEASE_SECONDS", "99999999"],
      ["MEDIA_MAX_DEADLINE_SECONDS", "0"],
      ["MEDIA_HOUSEKEEPING_SECONDS", "0"],
      ["SESSION_TTL_HOURS", "100000"],
      ["DATABASE_URL", "postgres:/db.internal/x"],
    ]) {
      expect([name, value, refused({ [name!]: value! })]).toEqual([name, value, expect.stringContaining(name!)]);
    }
    expect(
      refused({
        DEFAULT_RATE_LIMIT: "1/86400s",
        HOLD_TTL_SECONDS: "60",
        SHUTDOWN_GRACE_SECONDS: "0",
        LEDGER_FLOAT_IDLE_MS: "0",
        LEDGER_COMMIT_INTERVAL_MS: "0",
      }),
    ).toBe("");
  });

  test("CATALOG_DAY must be a day of the calendar: any other is refused with the setting's message, not a crash", () => {
    for (const day of ["2026-02-30", "2026-13-01", "2026-00-10", "2026-01-32", "27/11/2026"])
      expect([day, refused({ CATALOG_DAY: day })]).toEqual([day, expect.stringContaining("CATALOG_DAY")]);
    expect(refused({ CATALOG_DAY: "2028-02-29" })).toBe("");
  });

  test("a bad setting makes the server exit 1 with the message", async () => {
    const p = Bun.spawn(["bun", "src/main.ts"], {
      env: { ...process.env, PORT: "99999" },
      stderr: "pipe",
      stdout: "pipe",
    });
    expect(await p.exited).toBe(1);
    expect(await new Response(p.stderr).text()).toContain("PORT");
  });

  test("every setting is documented in the README", () => {
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    for (const s of settings) expect(readme).toContain("`" + s.name + "`");
  });
});

describe("money units", () => {
  test("decimal text scales exactly, never through float multiplication", () => {
    expect(usdPerMillionToMicrosPerToken(0.3)).toBe(300); // 0.3 * 1000 is 300.00000000000006 in floats
    expect(usdPerMillionToMicrosPerToken("3.75")).toBe(3750);
    expect(usdToMicros(0.0325)).toBe(32_500_000);
    expect(creditsToMicros(12.5)).toBe(12_500_000);
    expect(creditsToMicros(1e-6)).toBe(1);
    expect(() => creditsToMicros(1e-7)).toThrow(/decimals/);
    expect(() => decimalToInteger("1e3", 0)).toThrow();
    expect(() => usdToMicros(Number.MAX_SAFE_INTEGER)).toThrow(/too large/);
  });
});
