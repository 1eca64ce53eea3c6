// The walks a byte scan lets skip (request-fields.ts mentions: unseen input, tool fees, other providers' reasoning),
// held to the walks over a whole parse on random and adversarial bodies: types spelled with escapes, the looked-for
// strings inside text, as keys, in other fields and nested deeper than a walk looks. Whatever the scan decides, the
// gateway's answer (the hold's allowances, the fees or the refusal, the reasoning dropped) is the walk's.
import { describe, expect, test } from "bun:test";
import { requestBodyOf } from "../../src/llm/body";
import { loadCatalog } from "../../src/catalog-loader";
import { withoutForeignReasoning } from "../../src/llm/foreign-reasoning";
import { protocols } from "../../src/llm/protocols/index";
import { paidToolUse } from "../../src/llm/protocols/paid-tools";
import { ApiError } from "../../src/http/errors";
import { random, type Random } from "../support/random-json";

const catalog = loadCatalog().llm;
const MODELS = [catalog.get("claude-sonnet-4-5")!, catalog.get("gpt-4.1")!, catalog.get("gpt-5.2")!];

const TYPES = [
  "text",
  "image",
  "image_url",
  "document",
  "file",
  "input_image",
  "input_file",
  "item_reference",
  "thinking",
  "redacted_thinking",
  "reasoning",
  "tool_result",
  "tool_use",
  "function_call_output",
  "mcp",
  "imagery",
  "files",
];
const TOOL_TYPES = [
  "function",
  "custom",
  "web_search",
  "web_search_preview",
  "web_search_20250305",
  "web_fetch_20250910",
  "code_execution_20250522",
  "code_interpreter",
  "file_search",
  "image_generation",
  "mcp",
];
const SOURCES = ["url", "file", "base64", "text", "content"];
const SIGNATURES = [undefined, "", "sig-from-anthropic", "sy1.openai.abc", "sy1.anthropic.x", "sy1.", 7];
/** Text that holds the looked-for strings, quoted or not: never a type, whatever it reads like. */
const TEXTS = [
  "plain words",
  'see "image_url" and "file" here',
  '{"type":"image","source":{"type":"url"}}',
  'a "thinking" block and "redacted_thinking"',
  "sy1.openai.abc",
  '"web_search_20250305" "web_fetch_x" "code_execution_" "mcp" "mcp_servers"',
  '"input_image" "input_file" "item_reference"',
  "é \u001b[0m 漢 😀",
];

function part(r: Random, depth: number): unknown {
  const type = r.pick(TYPES);
  const p: Record<string, unknown> = { type };
  switch (r.int(8)) {
    case 0:
      p.text = r.pick(TEXTS);
      break;
    case 1:
      p.source = { type: r.pick(SOURCES), url: "https://example.com/a" };
      break;
    case 2:
      p.image_url = r.pick([{ url: "https://example.com/a.png" }, { url: "data:image/png;base64,AA" }, "https://x/y"]);
      p.file_id = r.pick([undefined, "file-1", null]);
      break;
    case 3:
      p.signature = r.pick(SIGNATURES);
      p.data = r.pick(SIGNATURES);
      p.thinking = r.pick(TEXTS);
      break;
    case 4:
      p.encrypted_content = r.pick(SIGNATURES);
      break;
    case 5:
      // a look-alike where no walk looks: a tool call's input, or a key named like a type
      p.input = { type: r.pick(TYPES), source: { type: "url" }, [r.pick(TYPES)]: r.pick(TEXTS) };
      break;
    default:
      if (depth < 6) p[r.pick(["content", "output"])] = parts(r, depth + 1);
  }
  return p;
}

const parts = (r: Random, depth: number) => Array.from({ length: r.int(4) }, () => part(r, depth));

function message(r: Random): unknown {
  const role = r.pick(["user", "assistant", "system", "tool"]);
  if (r.next() < 0.3) return { role, content: r.pick(TEXTS) };
  return { role, content: parts(r, 1), ...(r.next() < 0.3 && (part(r, 1) as object)) };
}

function body(r: Random): Record<string, unknown> {
  const b: Record<string, unknown> = { model: "m", max_tokens: 100, stream: r.next() < 0.5 };
  // led by a long turn, so that the value is large enough to be parsed only when read
  const long = { role: "user", content: "x".repeat(300) };
  if (r.next() < 0.7) b.messages = [long, ...Array.from({ length: r.int(4) }, () => message(r))];
  if (r.next() < 0.5) b.input = Array.from({ length: r.int(6) }, () => message(r));
  if (r.next() < 0.5)
    b.tools = Array.from({ length: r.int(4) }, () => ({
      type: r.pick(TOOL_TYPES),
      name: r.pick(TOOL_TYPES),
      ...(r.next() < 0.3 && { max_uses: r.int(4) }),
      ...(r.next() < 0.3 && { description: r.pick(TEXTS) }),
    }));
  if (r.next() < 0.2) b.mcp_servers = r.pick([[], [{ type: "url", url: "https://mcp.example.com" }], "x"]);
  if (r.next() < 0.2) b.tool_choice = r.pick(["required", "auto", { type: "web_search" }]);
  if (r.next() < 0.3) b.system = r.pick(TEXTS);
  return b;
}

/**
 * The body's JSON, now and then spaced out (tabs, line ends), with a walked field repeated at the top level (JSON.parse
 * keeps the last: a decoy before the real one, or after it, where it is the one kept), and with a letter of a type or
 * key written as an escape (`"imag\u0065"`).
 */
function textOf(r: Random, value: unknown): string {
  let text = JSON.stringify(value, null, r.pick([undefined, undefined, 1, "\t"]));
  for (let n = r.int(3); n > 0; n--) {
    const decoy = body(r);
    const field = r.pick(["messages", "input", "tools"]);
    if (decoy[field] === undefined) continue;
    const member = `"${field}" : ${JSON.stringify(decoy[field])}`;
    text = r.next() < 0.5 ? `{${member},${text.slice(1)}` : `${text.slice(0, text.lastIndexOf("}"))},${member}}`;
  }
  for (let n = r.int(3); n > 0 && r.next() < 0.5; n--) {
    const quotes = [...text.matchAll(/"([a-z_]{3,})"/g)];
    if (!quotes.length) break;
    const m = r.pick(quotes);
    const at = m.index! + 1 + r.int(m[1]!.length);
    text = `${text.slice(0, at)}\\u00${text.charCodeAt(at).toString(16)}${text.slice(at + 1)}`;
  }
  if (r.next() < 0.2) text = text.replace('"model":"m"', '"model":"m\\u00e9\\u001b"'); // escapes of no ASCII letter
  return text;
}

function outcome(f: () => unknown): unknown {
  try {
    return { value: f() };
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    return { refused: e.code, param: (e as ApiError & { details?: unknown }).details };
  }
}

/** Every walk the scan may skip, as the gateway makes it on `b`. */
function verdicts(b: () => Record<string, any>) {
  const out: Record<string, unknown> = {};
  for (const name of ["chat", "anthropic", "responses"] as const) {
    const proto = protocols[name];
    out[`${name} unseen`] = outcome(() => proto.unseenInput!(b()));
    for (const model of MODELS)
      out[`${name} fees ${model.id}`] = outcome(() => paidToolUse(proto.paidTools!, b(), model));
    for (const provider of ["anthropic", "openai"])
      out[`${name} reasoning ${provider}`] = outcome(() => withoutForeignReasoning(name, b(), provider, "gpt-4.1"));
  }
  return out;
}

describe("what the scan decides is what the walks over a whole parse decide", () => {
  test("random and adversarial bodies", () => {
    let skipped = 0;
    let walked = 0;
    for (let seed = 1; seed <= 4000; seed++) {
      const r = random(seed);
      const text = textOf(r, body(r));
      const bytes = new Uint8Array(Buffer.from(text));
      const scanned = () => requestBodyOf(bytes, 0);
      const want = verdicts(() => JSON.parse(text));
      expect({ seed, ...verdicts(scanned) }).toEqual({ seed, ...want });
      // How often the scan spared the parse, so that both ways are exercised.
      const one = scanned();
      protocols.chat.unseenInput!(one);
      const get = Object.getOwnPropertyDescriptor(one, "messages")?.get;
      if (get) skipped++;
      else if ("messages" in one) walked++;
    }
    expect(skipped).toBeGreaterThan(300);
    expect(walked).toBeGreaterThan(300);
  });
});
