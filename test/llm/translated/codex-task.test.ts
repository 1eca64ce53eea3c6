// Codex CLI doing a task with tools on a model of another protocol: with model claude-sonnet-4-5 (Anthropic
// Messages, translated from Responses), it runs a command to read a file, then one to edit it, through the gateway.
// The upstream is scripted here: it answers each Messages request by the tool results the conversation holds (none →
// exec_command `cat`; one → exec_command `sed`; two → the final text), in Anthropic's stream shape with its usage.
// Every call is charged the Anthropic formula on that usage. Skipped with a message where Codex is missing.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ledgerOf, startEnv, stopEnv, type Env } from "../support";
import { chargeOf, LLMS } from "./clients";

const haveCodex = Bun.which("codex") !== null;
if (!haveCodex) console.warn("SKIPPED: Codex CLI tool task on a translated model — `codex` is not installed.");

const USAGE = { input_tokens: 1200, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 30 };
const seen: any[] = [];

const sse = (events: object[]) => events.map((ev: any) => `event: ${ev.type}\ndata: ${JSON.stringify(ev)}\n\n`).join("");
const start = { type: "message_start", message: { id: "msg_task", type: "message", role: "assistant", model: "claude-sonnet-4-5-20250929", content: [], stop_reason: null, stop_sequence: null, usage: { ...USAGE, output_tokens: 1 } } };
const end = (stop: string) => [{ type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: USAGE }, { type: "message_stop" }];
const toolUse = (id: string, input: object) =>
  sse([
    start,
    { type: "content_block_start", index: 0, content_block: { type: "tool_use", id, name: "exec_command", input: {} } },
    { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: JSON.stringify(input) } },
    { type: "content_block_stop", index: 0 },
    ...end("tool_use"),
  ]);
const say = (text: string) =>
  sse([start, { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }, { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } }, { type: "content_block_stop", index: 0 }, ...end("end_turn")]);

function answer(body: any): string {
  seen.push(body);
  const results = (body.messages ?? []).flatMap((m: any) => (Array.isArray(m.content) ? m.content : [])).filter((b: any) => b.type === "tool_result");
  if (!Array.isArray(body.tools) || !body.tools.some((t: any) => t.name === "exec_command")) return say("Hello.");
  if (results.length === 0) return toolUse("toolu_01Read", { cmd: "cat notes.txt" });
  if (results.length === 1) return toolUse("toolu_02Edit", { cmd: "sed -i 's/status: draft/status: final/' notes.txt" });
  return say("Done: the status is now final.");
}

const upstream = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    return new Response(answer(await req.json()), { headers: { "content-type": "text/event-stream" } });
  },
});

let e: Env;
beforeAll(async () => {
  if (haveCodex) e = await startEnv({ env: { ANTHROPIC_BASE_URL: `http://127.0.0.1:${upstream.port}` } });
});
afterAll(async () => {
  if (e) await stopEnv(e);
  await upstream.stop(true);
});

test.skipIf(!haveCodex)("Codex on Claude (translated) runs commands to read and edit a file; tool ids kept; each call charged natively", async () => {
  const { accountId, key } = await e.gw.account(100_000);
  const home = mkdtempSync(join(tmpdir(), "sy-codex-task-"));
  mkdirSync(join(home, ".codex"));
  const config = ['model = "claude-sonnet-4-5"', 'model_provider = "switchyard"', "", "[model_providers.switchyard]", 'name = "Switchyard"', `base_url = "${e.gw.url}/v1"`, 'env_key = "SWITCHYARD_API_KEY"', 'wire_api = "responses"', ""];
  writeFileSync(join(home, ".codex/config.toml"), config.join("\n"));
  writeFileSync(join(home, "notes.txt"), "title: gateway\nstatus: draft\n");
  const p = Bun.spawn(["codex", "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "Set the status in notes.txt to final."], {
    cwd: home,
    env: { PATH: process.env.PATH!, HOME: home, SWITCHYARD_API_KEY: key },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => p.kill(), 90_000);
  const [code, stdout] = await Promise.all([p.exited, new Response(p.stdout).text()]);
  clearTimeout(timer);
  expect(code).toBe(0);
  expect(stdout).toContain("Done: the status is now final.");
  expect(readFileSync(join(home, "notes.txt"), "utf8")).toBe("title: gateway\nstatus: final\n");

  const results = seen.at(-1).messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : [])).filter((b: any) => b.type === "tool_result");
  expect(results.map((b: any) => b.tool_use_id)).toEqual(["toolu_01Read", "toolu_02Edit"]);
  expect(JSON.stringify(results[0].content)).toContain("status: draft");

  const m = LLMS.find((x) => x.id === "claude-sonnet-4-5")!;
  const lines = (await ledgerOf(e.gw, accountId)).calls;
  expect(lines.length).toBe(seen.length);
  for (const c of lines) expect([c.status, c.cost]).toEqual(["ok", chargeOf(m, { input: 1200, cacheRead: 0, cacheWrite: 0, output: 30 })]);
}, 120_000);
