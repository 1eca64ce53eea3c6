import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { ConfigError, loadConfig } from "../../src/config";
import { settings } from "../../src/settings";
import { creditsToMicros, decimalToInteger, usdPerMillionToMicrosPerToken, usdToMicros } from "../../src/ledger/units";

describe("configuration", () => {
  test("defaults give an embedded SQLite gateway with in-process limits", () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ port: 3000, dialect: "sqlite", databaseUrl: "./data/switchyard.sqlite", redisUrl: undefined, defaultRateLimit: { requests: 5, windowSeconds: 10 }, defaultMaxConcurrentTasks: 2 });
    expect(c.publicBaseUrl).toBe("http://localhost:3000");
    expect(loadConfig({ DATABASE_URL: "postgres://u@h/db" }).dialect).toBe("pg");
  });

  test("bad values stop startup with one message naming each, secrets hidden", () => {
    let err: Error | undefined;
    try {
      loadConfig({ PORT: "http", REDIS_URL: "not a url", ADMIN_TOKEN: "short", DEFAULT_RATE_LIMIT: "5 per 10s", DATABASE_URL: "mysql://x" });
    } catch (e) {
      err = e as Error;
    }
    expect(err).toBeInstanceOf(ConfigError);
    for (const name of ["PORT", "REDIS_URL", "ADMIN_TOKEN", "DEFAULT_RATE_LIMIT", "DATABASE_URL"]) expect(err!.message).toContain(name);
    expect(err!.message).not.toContain("short");
  });

  test("a bad setting makes the server exit 1 with the message", async () => {
    const p = Bun.spawn(["bun", "src/main.ts"], { env: { ...process.env, PORT: "99999" }, stderr: "pipe", stdout: "pipe" });
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
