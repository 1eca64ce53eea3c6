// Coding agents on translated models: Claude Code (`claude -p`, which speaks only /v1/messages) on a GPT, a Gemini,
// a Grok and a DeepSeek model, and Codex CLI (`codex exec`, only /v1/responses) on a Claude and a Gemini model, each
// doing a multi-step task with tools — read a file, edit it, report — through the gateway against the fake
// upstream. The fake scripts the model's turns in the model's NATIVE protocol (agent-script.ts), so every tool call
// and tool result crosses the gateway's translation both ways. Each run checks the file really changed, that what
// the tool read reached the upstream, and that every upstream call was charged the native formula, from the ledger.
// Skipped with a message where a CLI is not installed (.ci/run installs the pinned versions).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SCRIPT_USAGE, scriptReasoning, upstreamPathOf, type AgentStep } from "../fakes/agent-script";
import { ledgerOf, MICROS, startEnv, stopEnv, type Env } from "./support";
import { chargeOf, LLMS } from "./translated/clients";

const haveClaude = Bun.which("claude") !== null;
const haveCodex = Bun.which("codex") !== null;
if (!haveClaude) console.warn("SKIPPED: Claude Code on translated models — `claude` is not installed (npm i -g @anthropic-ai/claude-code@2.1.329).");
if (!haveCodex) console.warn("SKIPPED: Codex CLI on translated models — `codex` is not installed (npm i -g @openai/codex@0.169.0).");

let e: Env;
beforeAll(async () => {
  if (haveClaude || haveCodex) e = await startEnv();
});
afterAll(async () => {
  if (e) await stopEnv(e);
});

const LLM_PATHS = new Set(LLMS.map(upstreamPathOf));

const BEFORE = "colour = blue\n";
const AFTER = "colour = green\n";
const FINAL = "Done: notes.txt now says green.";

async function run(cmd: string[], env: Record<string, string>, cwd: string) {
  const p = Bun.spawn(cmd, { cwd, env: { PATH: process.env.PATH!, ...env }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => p.kill(), 150_000);
  const [code, stdout, stderr] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/** A throwaway home and project directory holding notes.txt. */
function workspace(prefix: string) {
  const home = mkdtempSync(join(tmpdir(), prefix));
  const project = join(home, "project");
  mkdirSync(project);
  writeFileSync(join(project, "notes.txt"), BEFORE);
  return { home, project, file: join(project, "notes.txt") };
}

/**
 * After an agent run on `modelId`: the file says AFTER, every upstream LLM call went to the model's native path,
 * the tool's reading of the file reached the upstream (a tool result translated into the native protocol), and the
 * ledger holds one line per upstream call, each charged the native formula on SCRIPT_USAGE.
 */
async function expectDone(modelId: string, accountId: string, file: string, out: { code: number; stdout: string; stderr: string }): Promise<string[]> {
  const m = LLMS.find((x) => x.id === modelId)!;
  if (out.code !== 0) console.error(out.stdout, out.stderr);
  expect(out.code).toBe(0);
  expect(out.stdout).toContain(FINAL);
  expect(readFileSync(file, "utf8")).toBe(AFTER);
  const calls = e.fake.requests.filter((q) => q.method === "POST" && LLM_PATHS.has(q.path));
  expect(calls.length).toBeGreaterThanOrEqual(3); // read, edit, report
  expect(new Set(calls.map((q) => q.path))).toEqual(new Set([upstreamPathOf(m)]));
  expect(calls.some((q) => q.body.includes("colour = blue"))).toBe(true);
  const each = chargeOf(m, { input: SCRIPT_USAGE.input, cacheRead: 0, cacheWrite: 0, output: SCRIPT_USAGE.output });
  const { calls: lines, wallet } = await ledgerOf(e.gw, accountId);
  expect(lines.map((l) => [l.status, l.cost])).toEqual(calls.map(() => ["ok", each]));
  expect(Number(wallet.held)).toBe(0);
  expect(Number(wallet.balance)).toBe(100_000 * MICROS - each * calls.length);
  return calls.map((q) => q.body);
}

/**
 * Every upstream request made after the first tool call (the ones whose history holds its id) carries the
 * reasoning that came with that call back: its opaque value (signature, encrypted_content) untouched, or, where the
 * provider has none (DeepSeek's reasoning_content), its text. The model that reasoned gets its reasoning back
 * through the agent, across two translations.
 */
function expectReasoningBack(bodies: string[], what: "opaque" | "text") {
  const later = bodies.filter((b) => b.includes("_script_0"));
  expect(later.length).toBeGreaterThanOrEqual(2);
  for (const b of later) expect(b).toContain(scriptReasoning(0)[what]);
}

type Back = "opaque" | "text" | "";

const claudeSteps = (file: string, reasoning: boolean): AgentStep[] => [
  { call: { name: "Read", input: { file_path: file } }, reasoning },
  { call: { name: "Edit", input: { file_path: file, old_string: "blue", new_string: "green" } }, reasoning },
  { text: FINAL, reasoning },
];

// [model, whether the upstream reasons first, what of its reasoning must come back to it, the --model given]
const CLAUDE_CODE: Array<[string, "reasoning" | "plain", Back, string?]> = [
  ["gpt-5.1", "plain", ""],
  ["gemini-2.5-flash", "plain", ""],
  ["grok-code-fast-1", "plain", ""],
  ["deepseek-chat", "plain", ""],
  ["gpt-5.1", "reasoning", "opaque"], // Responses reasoning items with encrypted_content
  ["deepseek-reasoner", "reasoning", "text"], // reasoning_content, wanted back on tool turns
  ["gemini-2.5-flash-lite", "plain", "", "haiku"], // the alias resolves through ANTHROPIC_DEFAULT_HAIKU_MODEL
  ["grok-4-fast", "plain", "", "sonnet"], // ... and ANTHROPIC_DEFAULT_SONNET_MODEL
];

for (const [model, how, back, alias] of CLAUDE_CODE) {
  const named = alias ? `--model ${alias}, mapped to ${model}` : model;
  test.skipIf(!haveClaude)(`Claude Code on ${named} (translated, ${how}): reads and edits a file through the gateway; every call charged`, async () => {
    const { accountId, key } = await e.gw.account(100_000);
    const w = workspace("sy-claude-t-");
    e.fake.reset();
    e.fake.setScenario({ kind: "script", steps: claudeSteps(w.file, how === "reasoning") });
    const out = await run(
      ["claude", "-p", "In notes.txt, change the colour to green.", "--model", alias ?? model, "--permission-mode", "acceptEdits", "--allowedTools", "Read,Edit"],
      {
        HOME: w.home,
        ANTHROPIC_BASE_URL: e.gw.url,
        ANTHROPIC_AUTH_TOKEN: key,
        ...(alias ? {} : { ANTHROPIC_MODEL: model }),
        // the small model (side tasks) on the same model, so that every call must reach that model's upstream
        ANTHROPIC_DEFAULT_HAIKU_MODEL: model,
        ...(alias === "sonnet" && { ANTHROPIC_DEFAULT_SONNET_MODEL: model }),
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_AUTOUPDATER: "1",
      },
      w.project,
    );
    const bodies = await expectDone(model, accountId, w.file, out);
    if (back) expectReasoningBack(bodies, back);
  }, 180_000);
}

const codexSteps = (reasoning: boolean): AgentStep[] => [
  { call: { name: "exec_command", input: { cmd: "cat notes.txt" } }, reasoning },
  { call: { name: "exec_command", input: { cmd: "sed -i 's/blue/green/' notes.txt" } }, reasoning },
  { text: FINAL, reasoning },
];

const CODEX: Array<[string, "reasoning" | "plain", Back]> = [
  ["claude-sonnet-4-5", "plain", ""],
  ["gemini-2.5-pro", "plain", ""],
  ["claude-sonnet-4-5", "reasoning", "opaque"], // thinking blocks with signatures: Anthropic needs them back
];

for (const [model, how, back] of CODEX) {
  test.skipIf(!haveCodex)(`Codex CLI on ${model} (translated, ${how}): reads and edits a file through the gateway; every call charged`, async () => {
    const { accountId, key } = await e.gw.account(100_000);
    const w = workspace("sy-codex-t-");
    mkdirSync(join(w.home, ".codex"));
    writeFileSync(
      join(w.home, ".codex/config.toml"),
      [
        `model = "${model}"`,
        ...(how === "reasoning" ? ['model_reasoning_effort = "high"'] : []),
        'model_provider = "switchyard"',
        "",
        "[model_providers.switchyard]",
        'name = "Switchyard"',
        `base_url = "${e.gw.url}/v1"`,
        'env_key = "SWITCHYARD_API_KEY"',
        'wire_api = "responses"',
        "",
      ].join("\n"),
    );
    e.fake.reset();
    e.fake.setScenario({ kind: "script", steps: codexSteps(how === "reasoning") });
    const out = await run(
      ["codex", "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "In notes.txt, change the colour to green."],
      { HOME: w.home, SWITCHYARD_API_KEY: key },
      w.project,
    );
    const bodies = await expectDone(model, accountId, w.file, out);
    if (back) expectReasoningBack(bodies, back);
  }, 180_000);
}
