// Claude Code doing a task with tools on a model of another protocol: with --model gemini-2.5-flash (Chat
// Completions, translated), it reads a file and edits it through the gateway. The upstream is scripted here: it
// answers each chat request by what the conversation holds so far (no tool result yet → call Read; Read's result →
// call Edit; Edit's result → the final text), in chat's stream shape with its usage chunk. Every call is charged the
// chat formula on that usage. Skipped with a message where Claude Code is missing.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ledgerOf, startEnv, stopEnv, type Env } from "../support";
import { chargeOf, LLMS } from "./clients";

const haveClaude = Bun.which("claude") !== null;
if (!haveClaude) console.warn("SKIPPED: Claude Code tool task on a translated model — `claude` is not installed.");

const USAGE = { prompt_tokens: 900, completion_tokens: 40, total_tokens: 940 };
const seen: any[] = [];
let dir = "";

const chunk = (delta: object, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "chatcmpl-task", object: "chat.completion.chunk", created: 1767225700, model: "gemini-2.5-flash", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const usageChunk = `data: ${JSON.stringify({ id: "chatcmpl-task", object: "chat.completion.chunk", created: 1767225700, model: "gemini-2.5-flash", choices: [], usage: USAGE })}\n\ndata: [DONE]\n\n`;
const toolCall = (id: string, name: string, args: object) =>
  chunk({ role: "assistant", content: null }) + chunk({ tool_calls: [{ index: 0, id, type: "function", function: { name, arguments: JSON.stringify(args) } }] }) + chunk({}, "tool_calls") + usageChunk;
const say = (text: string) => chunk({ role: "assistant", content: text }) + chunk({}, "stop") + usageChunk;

/** The next step of the task, from the chat request Claude Code's translated call became. */
function answer(body: any): string {
  seen.push(body);
  const results = (body.messages ?? []).filter((m: any) => m.role === "tool");
  if (!Array.isArray(body.tools) || !body.tools.some((t: any) => t.function?.name === "Edit")) return say("Hello.");
  if (results.length === 0) return toolCall("call_read_1", "Read", { file_path: join(dir, "notes.txt") });
  if (results.length === 1) return toolCall("call_edit_1", "Edit", { file_path: join(dir, "notes.txt"), old_string: "status: draft", new_string: "status: final" });
  return say("Done: the status is now final.");
}

const upstream = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    const body = await req.json();
    return new Response(answer(body), { headers: { "content-type": "text/event-stream" } });
  },
});

let e: Env;
beforeAll(async () => {
  if (haveClaude) e = await startEnv({ env: { GEMINI_BASE_URL: `http://127.0.0.1:${upstream.port}` } });
});
afterAll(async () => {
  if (e) await stopEnv(e);
  await upstream.stop(true);
});

test.skipIf(!haveClaude)("Claude Code on Gemini (translated) reads a file and edits it; tool ids kept; each call charged natively", async () => {
  const { accountId, key } = await e.gw.account(100_000);
  dir = mkdtempSync(join(tmpdir(), "sy-task-"));
  writeFileSync(join(dir, "notes.txt"), "title: gateway\nstatus: draft\n");
  const p = Bun.spawn(["claude", "-p", "Set the status in notes.txt to final.", "--model", "gemini-2.5-flash", "--allowedTools", "Read,Edit"], {
    cwd: dir,
    env: {
      PATH: process.env.PATH!,
      HOME: dir,
      ANTHROPIC_BASE_URL: e.gw.url,
      ANTHROPIC_API_KEY: key,
      ANTHROPIC_SMALL_FAST_MODEL: "gemini-2.5-flash",
      ANTHROPIC_DEFAULT_HAIKU_MODEL: "gemini-2.5-flash",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
    },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => p.kill(), 90_000);
  const [code, stdout] = await Promise.all([p.exited, new Response(p.stdout).text()]);
  clearTimeout(timer);
  expect(code).toBe(0);
  expect(stdout).toContain("Done: the status is now final.");
  expect(readFileSync(join(dir, "notes.txt"), "utf8")).toBe("title: gateway\nstatus: final\n");

  // The tool results came back under the ids the upstream gave its calls, Read's with the file's text.
  const last = seen.at(-1);
  const tools = last.messages.filter((m: any) => m.role === "tool");
  expect(tools.map((m: any) => m.tool_call_id)).toEqual(["call_read_1", "call_edit_1"]);
  expect(JSON.stringify(tools[0].content)).toContain("status: draft");

  const m = LLMS.find((x) => x.id === "gemini-2.5-flash")!;
  const lines = (await ledgerOf(e.gw, accountId)).calls;
  expect(lines.length).toBe(seen.length);
  for (const c of lines) expect([c.status, c.cost]).toEqual(["ok", chargeOf(m, { input: 900, cacheRead: 0, cacheWrite: 0, output: 40 })]);
}, 120_000);
