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
import {
  agentInstalled,
  CLAUDE_CODE_CLI,
  CLAUDE_CODE_QUIET,
  CODEX_CLI,
  configureCodex,
  runAgent,
  type AgentRun,
} from "../support/agents";

const haveClaude = agentInstalled(CLAUDE_CODE_CLI, "Claude Code on translated models");
const haveCodex = agentInstalled(CODEX_CLI, "Codex CLI on translated models");

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

const RUN_TIMEOUT_MS = 150_000;

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
async function expectDone(
  modelId: string,
  accountId: string,
  file: string,
  out: AgentRun,
  failedCalls: number,
): Promise<string[]> {
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
  expect(lines.length).toBe(calls.length);
  const failed = lines.filter((l) => l.status !== "ok");
  expect(failed.map((l) => [l.status, l.cost, l.entry_id])).toEqual(
    Array(failedCalls).fill(["upstream_error", 0, null]),
  );
  expect(lines.filter((l) => l.status === "ok").map((l) => l.cost)).toEqual(
    Array(calls.length - failedCalls).fill(each),
  );
  expect(Number(wallet.held)).toBe(0);
  expect(Number(wallet.balance)).toBe(100_000 * MICROS - each * (calls.length - failedCalls));
  return calls.map((q) => q.body);
}

/**
 * Every upstream request made after the first tool call (the ones whose history holds its id) carries the
 * reasoning that came with that call back: its opaque value (signature, encrypted_content, Gemini's thought
 * signature on the call) untouched, or, where the provider has none (DeepSeek's reasoning_content), its text. The
 * model that reasoned gets its reasoning back through the agent, across two translations.
 */
const SENT_BACK: Record<"opaque" | "text" | "signature", string> = {
  opaque: scriptReasoning(0).opaque,
  text: scriptReasoning(0).text,
  signature: `"thought_signature":"${scriptReasoning(0).opaque}"`,
};
function expectReasoningBack(bodies: string[], reasoning: keyof typeof SENT_BACK) {
  const later = bodies.filter((b) => b.includes("_script_0"));
  expect(later.length).toBeGreaterThanOrEqual(2);
  for (const b of later) expect(b).toContain(SENT_BACK[reasoning]);
}

/** One agent run: the model, and what the scripted upstream does besides reading and editing. */
interface Case {
  model: string;
  /** the upstream reasons before each step; what of that reasoning must come back to it on later turns
   * ("signature": Gemini 3's thought signature on each tool call, with no reasoning text) */
  reasoning?: "opaque" | "text" | "signature";
  /** Claude Code: the --model alias given instead of the model (mapped to it by its ANTHROPIC_DEFAULT_* variable) */
  alias?: "haiku" | "sonnet";
  /** the first request of the edit step fails with the upstream protocol's HTTP 500: the agent retries it */
  editFailsOnce?: boolean;
}

const title = (c: Case, agent: string) =>
  `${agent} on ${c.alias ? `--model ${c.alias}, mapped to ${c.model}` : c.model} (translated${c.reasoning ? ", reasoning" : ""}): ` +
  (c.editFailsOnce
    ? "the edit's upstream call fails once, the agent retries it; the failed call released, the others charged"
    : "reads and edits a file through the gateway; every call charged");

type ToolCall = { name: string; input: Record<string, unknown> };
const steps = (c: Case, read: ToolCall, edit: ToolCall): AgentStep[] => {
  const reasoning = c.reasoning === "signature" ? "signature" : !!c.reasoning;
  return [
    { call: read, reasoning },
    { call: edit, reasoning, failFirst: c.editFailsOnce ? 1 : 0 },
    { text: FINAL, reasoning },
  ];
};

const CLAUDE_CODE: Case[] = [
  { model: "gpt-5.1" },
  { model: "gemini-2.5-flash" },
  { model: "grok-4.20" },
  { model: "deepseek-test" },
  { model: "gpt-5.1", reasoning: "opaque" }, // Responses reasoning items with encrypted_content
  { model: "deepseek-test-reasoner", reasoning: "text" }, // reasoning_content, wanted back on tool turns
  { model: "gemini-2.5-pro", reasoning: "signature" }, // Gemini 3 refuses a tool turn without its signature
  { model: "gemini-2.5-flash-lite", alias: "haiku" }, // through ANTHROPIC_DEFAULT_HAIKU_MODEL
  { model: "grok-4.20", alias: "sonnet" }, // through ANTHROPIC_DEFAULT_SONNET_MODEL
  { model: "gemini-2.5-flash", editFailsOnce: true }, // a chat 500 becomes Anthropic's api_error, which it retries
];

for (const c of CLAUDE_CODE) {
  test.skipIf(!haveClaude)(
    title(c, "Claude Code"),
    async () => {
      const { accountId, key } = await e.gw.account(100_000);
      const w = workspace("sy-claude-t-");
      e.fake.reset();
      e.fake.setScenario({
        kind: "script",
        steps: steps(
          c,
          { name: "Read", input: { file_path: w.file } },
          { name: "Edit", input: { file_path: w.file, old_string: "blue", new_string: "green" } },
        ),
      });
      const out = await runAgent(
        [
          "claude",
          "-p",
          "In notes.txt, change the colour to green.",
          "--model",
          c.alias ?? c.model,
          "--permission-mode",
          "acceptEdits",
          "--allowedTools",
          "Read,Edit",
        ],
        {
          HOME: w.home,
          ANTHROPIC_BASE_URL: e.gw.url,
          ANTHROPIC_AUTH_TOKEN: key,
          ...(!c.alias && { ANTHROPIC_MODEL: c.model }),
          // the small model (side tasks) on the same model, so that every call must reach that model's upstream
          ANTHROPIC_DEFAULT_HAIKU_MODEL: c.model,
          ...(c.alias === "sonnet" && { ANTHROPIC_DEFAULT_SONNET_MODEL: c.model }),
          ...CLAUDE_CODE_QUIET,
        },
        w.project,
        RUN_TIMEOUT_MS,
      );
      const bodies = await expectDone(c.model, accountId, w.file, out, c.editFailsOnce ? 1 : 0);
      if (c.reasoning) expectReasoningBack(bodies, c.reasoning);
    },
    180_000,
  );
}

const CODEX: Case[] = [
  { model: "claude-sonnet-4-5" },
  { model: "gemini-2.5-pro" },
  { model: "claude-sonnet-4-5", reasoning: "opaque" }, // thinking blocks with signatures: Anthropic needs them back
  { model: "gemini-2.5-pro", reasoning: "signature" },
  { model: "claude-sonnet-4-5", editFailsOnce: true }, // Anthropic's 500 becomes a Responses server error, retried
];

for (const c of CODEX) {
  test.skipIf(!haveCodex)(
    title(c, "Codex CLI"),
    async () => {
      const { accountId, key } = await e.gw.account(100_000);
      const w = workspace("sy-codex-t-");
      configureCodex(w.home, e.gw.url, c.model, c.reasoning ? ['model_reasoning_effort = "high"'] : []);
      e.fake.reset();
      e.fake.setScenario({
        kind: "script",
        steps: steps(
          c,
          { name: "exec_command", input: { cmd: "cat notes.txt" } },
          { name: "exec_command", input: { cmd: "sed -i 's/blue/green/' notes.txt" } },
        ),
      });
      const out = await runAgent(
        [
          "codex",
          "exec",
          "--skip-git-repo-check",
          "--dangerously-bypass-approvals-and-sandbox",
          "In notes.txt, change the colour to green.",
        ],
        { HOME: w.home, SWITCHYARD_API_KEY: key },
        w.project,
        RUN_TIMEOUT_MS,
      );
      const bodies = await expectDone(c.model, accountId, w.file, out, c.editFailsOnce ? 1 : 0);
      if (c.reasoning) expectReasoningBack(bodies, c.reasoning);
    },
    180_000,
  );
}
