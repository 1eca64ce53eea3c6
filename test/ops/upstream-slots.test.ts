import { expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { spawnGateway } from "../support/process";
import { tempSqlitePath } from "../support/services";

// Bun lets BUN_CONFIG_MAX_HTTP_REQUESTS fetches out at once (256 unset) and queues the rest behind them, long streams
// included: an operator must hear about it at startup, and the ways the README starts the gateway must lift it.
setDefaultTimeout(30_000);
const root = new URL("../..", import.meta.url).pathname;

const warnings = (stdout: string) =>
  stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l))
    .filter((l) => l.msg === "few upstream request slots");

test("unset: startup warns with Bun's 256 and names the setting; 16384: no warning", async () => {
  const unset = await spawnGateway({ DATABASE_URL: tempSqlitePath(), BUN_CONFIG_MAX_HTTP_REQUESTS: "" });
  const lifted = await spawnGateway({ DATABASE_URL: tempSqlitePath(), BUN_CONFIG_MAX_HTTP_REQUESTS: "16384" });
  try {
    const [warning] = warnings(unset.stdout());
    expect(warning).toMatchObject({ level: "warn", slots: 256 });
    expect(warning.hint).toContain("BUN_CONFIG_MAX_HTTP_REQUESTS=16384");
    expect(warnings(lifted.stdout())).toEqual([]);
  } finally {
    await Promise.all([unset.stop(), lifted.stop()]);
  }
});

test("a value Bun cannot take stops startup naming the setting", async () => {
  const proc = Bun.spawn(["bun", "src/main.ts"], {
    cwd: root,
    env: { ...process.env, PORT: "0", DATABASE_URL: ":memory:", BUN_CONFIG_MAX_HTTP_REQUESTS: "70000" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
  expect(code).toBe(1);
  expect(stderr).toContain("BUN_CONFIG_MAX_HTTP_REQUESTS");
});

test("bun start, bun run dev and the Docker image lift the limit", () => {
  const scripts = JSON.parse(readFileSync(root + "package.json", "utf8")).scripts;
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the shell's default-value expansion, as package.json has it
  const lifted = "BUN_CONFIG_MAX_HTTP_REQUESTS=${BUN_CONFIG_MAX_HTTP_REQUESTS:-16384}";
  expect(scripts.start).toContain(lifted);
  expect(scripts.dev).toContain(lifted);
  expect(readFileSync(root + "Dockerfile", "utf8")).toMatch(/^ENV .*BUN_CONFIG_MAX_HTTP_REQUESTS=16384/m);
});
