// CI runs only `bun test --timeout 30000`, so the formatter/linter check and the type-check run here: `biome ci` (format and lint,
// configured in biome.json) and `tsc --noEmit` over tsconfig.json's folders. A failure prints the tool's output.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";

setDefaultTimeout(120_000);
const root = join(import.meta.dir, "..", "..");

async function run(command: string[]): Promise<{ exitCode: number; output: string }> {
  const child = Bun.spawn(command, {
    cwd: root,
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, NO_COLOR: "1" },
  });
  const [stdout, stderr, exitCode] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  return { exitCode, output: `${stdout}\n${stderr}`.trim() };
}

describe("the house", () => {
  test("biome ci passes: the tree is formatted and lint finds no error", async () => {
    const biome = join(root, "node_modules", ".bin", "biome");
    const { exitCode, output } = await run([biome, "ci", "--colors=off", "--max-diagnostics=40", "."]);
    if (exitCode !== 0)
      throw new Error(`biome ci exited ${exitCode} (bun run house:format fixes formatting):\n${output}`);
    expect(exitCode).toBe(0);
  });

  test("tsc --noEmit passes over tsconfig.json's folders", async () => {
    const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
    const { exitCode, output } = await run([
      process.execPath,
      tsc,
      "--noEmit",
      "--pretty",
      "false",
      "-p",
      "tsconfig.json",
    ]);
    if (exitCode !== 0) throw new Error(`tsc exited ${exitCode}:\n${output}`);
    expect(exitCode).toBe(0);
  });
});
