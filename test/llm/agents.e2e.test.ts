// The coding agents complete a prompt through the gateway against the fake upstream: Claude Code (`claude -p`)
// on /v1/messages and Codex CLI (`codex exec`, custom provider, wire_api "responses") on /v1/responses. Each runs
// with a throwaway $HOME. Skipped with a message where the CLI is not installed (.ci/run installs the pinned
// versions: @anthropic-ai/claude-code@2.1.329, @openai/codex@0.169.0).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  agentInstalled,
  CLAUDE_CODE_CLI,
  CLAUDE_CODE_QUIET,
  CODEX_CLI,
  configureCodex,
  runAgent,
} from "../support/agents";
import { ledgerOf, startEnv, stopEnv, type Env } from "./support";

const haveClaude = agentInstalled(CLAUDE_CODE_CLI, "Claude Code test");
const haveCodex = agentInstalled(CODEX_CLI, "Codex CLI test");

let e: Env;
beforeAll(async () => {
  if (haveClaude || haveCodex) e = await startEnv();
});
afterAll(async () => {
  if (e) await stopEnv(e);
});

const RUN_TIMEOUT_MS = 90_000;

test.skipIf(!haveClaude)(
  "Claude Code (claude -p) completes a prompt through the gateway; each call charged exactly",
  async () => {
    const { accountId, key } = await e.gw.account(100_000); // Claude Code asks for up to 64k output tokens
    const home = mkdtempSync(join(tmpdir(), "sy-claude-"));
    e.fake.reset();
    const r = await runAgent(
      ["claude", "-p", "Say hello", "--model", "claude-opus-4-5"],
      {
        HOME: home,
        ANTHROPIC_BASE_URL: e.gw.url,
        ANTHROPIC_API_KEY: key,
        ANTHROPIC_SMALL_FAST_MODEL: "claude-haiku-4-5",
        ...CLAUDE_CODE_QUIET,
      },
      home,
      RUN_TIMEOUT_MS,
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Hello! How can I help you today?"); // the fixture's text, streamed
    const calls = e.fake.requests.filter((q) => q.path === "/v1/messages");
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.every((q) => q.headers["x-api-key"] === "sk-ant-upstream-secret")).toBe(true);
    // Every call streams A_stream_text.sse: 21 input + 1450 cache-write + 12 output tokens at Opus 4.5 prices.
    const lines = (await ledgerOf(e.gw, accountId)).calls;
    expect(lines.length).toBe(calls.length);
    for (const c of lines) expect(c.cost).toBe(21 * 5000 + 1450 * 6250 + 12 * 25000);
  },
  120_000,
);

test.skipIf(!haveCodex)(
  "Codex CLI (codex exec, custom provider on /v1/responses) completes a prompt; charged exactly",
  async () => {
    const { accountId, key } = await e.gw.account(100_000);
    const home = mkdtempSync(join(tmpdir(), "sy-codex-"));
    configureCodex(home, e.gw.url, "gpt-6.2-sol");
    e.fake.reset();
    const r = await runAgent(
      ["codex", "exec", "--skip-git-repo-check", "Say hello"],
      { HOME: home, SWITCHYARD_API_KEY: key },
      home,
      RUN_TIMEOUT_MS,
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Hi there! How can I help?"); // C_stream.sse's text
    const calls = e.fake.requests.filter((q) => q.path === "/v1/responses");
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.every((q) => q.headers.authorization === "Bearer sk-openai-upstream-secret")).toBe(true);
    // Codex offers web_search in every request; GPT-6.2 Sol has no web-search price here, so it is left out.
    const toolTypes = calls.flatMap((q) => (JSON.parse(q.body).tools ?? []).map((t: { type: string }) => t.type));
    expect(toolTypes).not.toContain("web_search");
    // C_stream.sse: 1320 input of which 1152 cached, 8 output, at GPT-6.2 Sol prices (2 / 0.10 / 10 USD per M).
    const lines = (await ledgerOf(e.gw, accountId)).calls;
    expect(lines.length).toBe(calls.length);
    for (const c of lines) expect(c.cost).toBe((1320 - 1152) * 2000 + 1152 * 100 + 8 * 10000);
  },
  120_000,
);
