// The coding agents on models of other protocols, translated, against the fake upstream: Claude Code (`claude -p`,
// /v1/messages) with a GPT, Gemini, Grok and DeepSeek model as its main and small model, and Codex CLI (`codex exec`,
// /v1/responses) with a Claude and a Gemini model. Each finishes its prompt with the upstream's text, and every
// call is charged the native formula on the upstream's usage. Skipped with a message where the CLI is missing.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ledgerOf, startEnv, stopEnv, type Env } from "../support";
import { chargeOf, LLMS, nativeOf, STATED } from "./clients";

const haveClaude = Bun.which("claude") !== null;
const haveCodex = Bun.which("codex") !== null;
if (!haveClaude) console.warn("SKIPPED: Claude Code on translated models — `claude` is not installed.");
if (!haveCodex) console.warn("SKIPPED: Codex CLI on translated models — `codex` is not installed.");

let e: Env;
beforeAll(async () => {
  if (haveClaude || haveCodex) e = await startEnv();
});
afterAll(async () => {
  if (e) await stopEnv(e);
});

/** The text each native protocol's "ok" stream carries (A_stream_text, B_stream, C_stream). */
const TEXT = { "/v1/messages": "Hello! How can I help you today?", "/v1/chat/completions": "Hello! How can I help?", "/v1/responses": "Hi there! How can I help?" };

async function run(cmd: string[], env: Record<string, string>, cwd: string) {
  const p = Bun.spawn(cmd, { cwd, env: { PATH: process.env.PATH!, ...env }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => p.kill(), 90_000);
  const [code, stdout, stderr] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/** Every call of the account was charged the native formula on the "ok" stream's usage of the model's protocol. */
async function expectChargedNatively(accountId: string, id: string) {
  const m = LLMS.find((x) => x.id === id)!;
  const lines = (await ledgerOf(e.gw, accountId)).calls;
  expect(lines.length).toBeGreaterThan(0);
  for (const c of lines) expect([c.status, c.cost]).toEqual(["ok", chargeOf(m, STATED[nativeOf(m)].ok.stream)]);
}

for (const id of ["gpt-5.1", "gemini-2.5-flash", "grok-4", "deepseek-chat"]) {
  test.skipIf(!haveClaude)(`Claude Code with --model ${id} (translated) completes a prompt; each call charged natively`, async () => {
    const { accountId, key } = await e.gw.account(100_000);
    const home = mkdtempSync(join(tmpdir(), "sy-claude-"));
    e.fake.reset();
    const env = { HOME: home, ANTHROPIC_BASE_URL: e.gw.url, ANTHROPIC_API_KEY: key, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1" };
    const r = await run(["claude", "-p", "Say hello", "--model", id], { ...env, ANTHROPIC_SMALL_FAST_MODEL: id, ANTHROPIC_DEFAULT_HAIKU_MODEL: id }, home);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(TEXT[nativeOf(LLMS.find((x) => x.id === id)!)]);
    expect(e.fake.requests.some((q) => q.path === "/v1/messages")).toBe(false); // nothing reached Anthropic
    await expectChargedNatively(accountId, id);
  }, 120_000);
}

for (const id of ["claude-sonnet-4-5", "gemini-2.5-pro"]) {
  test.skipIf(!haveCodex)(`Codex CLI with model ${id} (translated) completes a prompt; each call charged natively`, async () => {
    const { accountId, key } = await e.gw.account(100_000);
    const home = mkdtempSync(join(tmpdir(), "sy-codex-"));
    mkdirSync(join(home, ".codex"));
    const config = [`model = "${id}"`, 'model_provider = "switchyard"', "", "[model_providers.switchyard]", 'name = "Switchyard"', `base_url = "${e.gw.url}/v1"`, 'env_key = "SWITCHYARD_API_KEY"', 'wire_api = "responses"', ""];
    writeFileSync(join(home, ".codex/config.toml"), config.join("\n"));
    e.fake.reset();
    const r = await run(["codex", "exec", "--skip-git-repo-check", "Say hello"], { HOME: home, SWITCHYARD_API_KEY: key }, home);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(TEXT[nativeOf(LLMS.find((x) => x.id === id)!)]);
    expect(e.fake.requests.some((q) => q.path === "/v1/responses")).toBe(false); // nothing reached OpenAI's Responses
    await expectChargedNatively(accountId, id);
  }, 120_000);
}
