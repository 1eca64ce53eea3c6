import { describe, expect, test } from "bun:test";
import { spawnGateway } from "../support/process";
import { tempSqlitePath } from "../support/services";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// What an operator sees when the gateway cannot start: one line naming what to fix, exit status 1, no stack trace.
const root = new URL("../..", import.meta.url).pathname;

async function start(env: Record<string, string>) {
  const proc = Bun.spawn(["bun", "src/main.ts"], {
    cwd: root,
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1", DATABASE_URL: ":memory:", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => proc.kill(), 20_000);
  const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
  clearTimeout(timer);
  return { code, lines: stderr.trim().split("\n") };
}

describe("startup errors", () => {
  test("a bad CATALOG_PATH entry: one line naming the entry", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "sy-cat-")), "catalog.json");
    writeFileSync(
      path,
      JSON.stringify([
        {
          id: "house-model",
          type: "llm",
          endpoint: "/v1/chat/completions",
          provider: "openai",
          upstream_model: "x",
          pricing: { input: 1 },
        },
      ]),
    );
    const { code, lines } = await start({ CATALOG_PATH: path });
    expect(code).toBe(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toStartWith("switchyard could not start: invalid model catalog: ");
    expect(lines[0]).toContain('"house-model"');
  }, 30_000);

  test("a Postgres server that cannot be reached: one line naming it, without its password", async () => {
    const { code, lines } = await start({ DATABASE_URL: "postgres://app:S3cretPW@127.0.0.1:1/switchyard" });
    expect(code).toBe(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toStartWith(
      "switchyard could not start: cannot open the database postgres://***@127.0.0.1:1/switchyard (DATABASE_URL): ",
    );
    expect(lines.join("\n")).not.toContain("S3cretPW");
  }, 30_000);

  test("a SQLite file that cannot be opened: one line naming DATABASE_URL", async () => {
    const { code, lines } = await start({ DATABASE_URL: "/proc/no-such-dir/x.sqlite" });
    expect(code).toBe(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toStartWith(
      "switchyard could not start: cannot open the database /proc/no-such-dir/x.sqlite (DATABASE_URL): ",
    );
  }, 30_000);

  test("a file that is not a SQLite database: one line naming DATABASE_URL", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "sy-notdb-")), "notes.sqlite");
    writeFileSync(path, "these are my notes, not a database ".repeat(200));
    const { code, lines } = await start({ DATABASE_URL: path });
    expect(code).toBe(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toStartWith(`switchyard could not start: cannot open the database ${path} (DATABASE_URL): `);
  }, 30_000);

  test("URLs whose password holds `#`, `/` or `?` unescaped are refused without printing the password", async () => {
    for (const [name, value] of [
      ["DATABASE_URL", "postgres://app:s3cr#tpw@127.0.0.1:5432/x"],
      ["REDIS_URL", "redis://:s3cr#tpw@127.0.0.1:6379"],
      ["REDIS_URL", "redis://:pa/ss?wd@127.0.0.1:6379"],
      ["REDIS_URL", "redis://:hunter2"],
    ]) {
      const { code, lines } = await start({ [name!]: value! });
      expect([name, value, code]).toEqual([name, value, 1]);
      const text = lines.join("\n");
      expect(text).toContain(name!);
      for (const secret of ["s3cr", "tpw", "wd@", "hunter2"])
        expect([value, text.includes(secret)]).toEqual([value, false]);
    }
  }, 60_000);

  test("a port already in use: the second gateway exits with one line naming HOST and PORT, and takes none of the first one's connections", async () => {
    const first = await spawnGateway({ DATABASE_URL: tempSqlitePath() });
    try {
      const port = new URL(first.url).port;
      const { code, lines } = await start({ PORT: port, DATABASE_URL: tempSqlitePath() });
      expect(code).toBe(1);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toStartWith(`switchyard could not start: cannot listen on 127.0.0.1:${port} (HOST, PORT): `);
    } finally {
      await first.stop();
    }
  }, 60_000);
});
