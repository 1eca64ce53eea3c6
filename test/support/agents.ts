// The coding-agent CLIs the agent tests drive through the gateway: whether each is installed (.ci/run installs the
// pinned versions), a run of one with its own environment, and Codex's custom-provider configuration.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const CLAUDE_CODE_CLI = { command: "claude", install: "npm i -g @anthropic-ai/claude-code@2.1.329" };
export const CODEX_CLI = { command: "codex", install: "npm i -g @openai/codex@0.169.0" };

/** Whether the agent's CLI is on PATH; says `SKIPPED: <what>` where it is not. */
export function agentInstalled(agent: { command: string; install: string }, what: string): boolean {
  const installed = Bun.which(agent.command) !== null;
  if (!installed) console.warn(`SKIPPED: ${what} — \`${agent.command}\` is not installed (${agent.install}).`);
  return installed;
}

/** Claude Code's settings that keep a test run to the calls the prompt needs. */
export const CLAUDE_CODE_QUIET = { CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1" };

export interface AgentRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs an agent CLI with only PATH and `env` (a throwaway HOME among them), killed after `timeoutMs`. */
export async function runAgent(
  cmd: string[],
  env: Record<string, string>,
  cwd: string,
  timeoutMs: number,
): Promise<AgentRun> {
  const child = Bun.spawn(cmd, {
    cwd,
    env: { PATH: process.env.PATH!, ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => child.kill(), timeoutMs);
  const [code, stdout, stderr] = await Promise.all([
    child.exited,
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
  ]);
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/**
 * Writes `home`/.codex/config.toml: `model` through a custom provider "switchyard" on the gateway's /v1 with
 * wire_api "responses", its key read from SWITCHYARD_API_KEY. `settings` are more top-level lines.
 */
export function configureCodex(home: string, gatewayUrl: string, model: string, settings: string[] = []): void {
  mkdirSync(join(home, ".codex"));
  writeFileSync(
    join(home, ".codex/config.toml"),
    [
      `model = "${model}"`,
      ...settings,
      'model_provider = "switchyard"',
      "",
      "[model_providers.switchyard]",
      'name = "Switchyard"',
      `base_url = "${gatewayUrl}/v1"`,
      'env_key = "SWITCHYARD_API_KEY"',
      'wire_api = "responses"',
      "",
    ].join("\n"),
  );
}
