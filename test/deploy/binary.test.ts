import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnGateway, type GatewayProcess } from "../support/process";
import { jsonOf, type ListOf } from "../support/json";

// The deployment artifact: one binary that starts from any directory, applies its embedded migrations and serves.
const root = new URL("../..", import.meta.url).pathname;
const outDir = mkdtempSync(join(tmpdir(), "sy-bin-"));
const binary = join(outDir, "switchyard");
let gw: GatewayProcess | undefined;
afterAll(() => gw?.stop());

describe("compiled binary", () => {
  test("`bun run build` equivalent compiles; the binary starts from another directory and answers /v1/models", async () => {
    const build = Bun.spawnSync(["bun", "run", "build", "--outfile", binary], {
      cwd: root,
      stderr: "pipe",
      stdout: "pipe",
    });
    expect(build.exitCode, build.stderr.toString()).toBe(0);
    const elsewhere = mkdtempSync(join(tmpdir(), "sy-run-"));
    gw = await spawnGateway({ DATABASE_URL: "" }, [binary], elsewhere);
    const r = await fetch(gw.url + "/v1/models");
    expect(r.status).toBe(200);
    const { data } = await jsonOf<ListOf<{ id: string }>>(r);
    expect(data.find((m: any) => m.id === "claude-sonnet-4-5")).toBeDefined();
    // Discovery and operations work from the binary alone (package.json, prom-client and the docs are inside it).
    for (const path of ["/openapi.json", "/docs", "/auth.md", "/metrics", "/readyz"])
      expect((await fetch(gw.url + path)).status).toBe(200);
    expect(await Bun.file(join(elsewhere, "data/switchyard.sqlite")).exists()).toBe(true);

    // The operator CLI is inside the same binary.
    const cli = Bun.spawnSync([binary, "cli", "account:create", "--name", "bin", "--credits", "5"], {
      cwd: elsewhere,
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(cli.exitCode, cli.stderr.toString()).toBe(0);
    expect(JSON.parse(cli.stdout.toString())).toMatchObject({ name: "bin", credits: 5 });

    // The image's HEALTHCHECK: 0 while the gateway on PORT is ready, 1 when nothing answers there.
    const port = new URL(gw.url).port;
    const healthy = Bun.spawnSync([binary, "healthcheck"], {
      env: { ...process.env, PORT: port, HOST: "0.0.0.0" },
      stdout: "pipe",
    });
    expect(healthy.exitCode, healthy.stdout.toString()).toBe(0);
    expect(healthy.stdout.toString()).toStartWith('200 {"status":"ok"');
    await gw.stop();
    gw = undefined;
    const down = Bun.spawnSync([binary, "healthcheck"], {
      env: { ...process.env, PORT: port, HOST: "127.0.0.1" },
      stdout: "pipe",
    });
    expect(down.exitCode).toBe(1);

    await expectOnlyServeStartsAServer(elsewhere);
  }, 120_000);
});

/** Only no argument (or `serve`) starts a server: help and version print and exit, anything else is a usage error. */
async function expectOnlyServeStartsAServer(elsewhere: string) {
  const run = (...args: string[]) =>
    Bun.spawnSync([binary, ...args], { cwd: elsewhere, stdout: "pipe", stderr: "pipe", timeout: 10_000 });
  const version = (await Bun.file(join(root, "package.json")).json()).version;
  for (const flag of ["--help", "-h", "help"]) {
    const r = run(flag);
    expect(r.exitCode).toBe(0);
    expect(r.stdout.toString()).toContain("switchyard cli <command>");
  }
  for (const flag of ["--version", "-v", "version"]) {
    const r = run(flag);
    expect(r.exitCode).toBe(0);
    expect(r.stdout.toString()).toBe(`switchyard ${version}\n`);
  }
  for (const bad of [["--port", "4000"], ["start"], ["serve", "now"]]) {
    const r = run(...bad);
    expect(r.exitCode, bad.join(" ")).toBe(2);
    expect(r.stderr.toString()).toContain("Usage:");
    expect(r.stdout.toString()).toBe("");
  }
  const cliHelp = run("cli", "help");
  expect(cliHelp.exitCode).toBe(0);
  expect(cliHelp.stdout.toString()).toContain("ledger:check");
}
