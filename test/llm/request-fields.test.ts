// The request body read for its top-level fields (src/llm/request-fields.ts), held against JSON.parse on the same
// bytes: every field it gives equals JSON.parse's, in the same order; a body JSON.parse refuses is refused (at the
// latest once every field has been read); the walks it lets skip are skipped only when the bytes cannot hold what
// they look for (the hold, the tool fees and the reasoning dropped come out as from a whole parse).
import { describe, expect, test } from "bun:test";
import { requestBodyOf } from "../../src/llm/body";
import { fieldsOf, jsonTokens, mentions, topLevelMembers } from "../../src/llm/request-fields";
import { ApiError } from "../../src/http/errors";
import { loadCatalog } from "../../src/catalog-loader";
import { withoutForeignReasoning } from "../../src/llm/foreign-reasoning";
import { planHold } from "../../src/llm/meter";
import { protocols } from "../../src/llm/protocols/index";
import { NO_PAID_TOOLS, paidToolUse } from "../../src/llm/protocols/paid-tools";
import { objectText, random } from "../support/random-json";

const bytesOf = (text: string) => new Uint8Array(Buffer.from(text));

/** Every field read (getters and all), as JSON.parse would give the object. */
const readAll = (body: Record<string, any>) => Object.fromEntries(Object.keys(body).map((k) => [k, body[k]]));

/** The body as the gateway reads it, the scan used whatever the body's size (short bodies are parsed whole). */
const scanned = (bytes: Uint8Array) => requestBodyOf(bytes, 0);

/** How the gateway takes the bytes: the object, or the error it answers. */
function gatewayView(bytes: Uint8Array): { ok: true; value: unknown } | { ok: false; code: string } {
  try {
    return { ok: true, value: readAll(scanned(bytes)) };
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    return { ok: false, code: e.code };
  }
}

/** What the gateway answered when it parsed whole: the bytes decoded (bad UTF-8 as U+FFFD), then JSON.parse. */
function jsonParseView(text: string): { ok: true; value: unknown } | { ok: false; code: string } {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(bytesOf(text)));
  } catch {
    return { ok: false, code: "invalid_json" };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return { ok: false, code: "invalid_request" };
  return { ok: true, value };
}

/** Equal as JSON.parse gives them: the same keys in the same order, the same values (prototypes aside). */
function expectSame(got: unknown, want: unknown) {
  expect(got).toEqual(want as any);
  if (got && typeof got === "object") expect(Object.keys(got)).toEqual(Object.keys(want as object));
}

describe("against JSON.parse on the same bytes", () => {
  test("random bodies: the same fields, in the same order", () => {
    for (let seed = 1; seed <= 3000; seed++) {
      const text = objectText(random(seed), 0);
      const want = jsonParseView(text);
      const got = gatewayView(bytesOf(text));
      if (!want.ok) throw new Error(`seed ${seed}: the generator made invalid JSON`);
      expect(got.ok).toBe(true);
      if (got.ok) expectSame(got.value, want.value);
    }
  });

  test("random bodies with one byte changed, added or removed: refused exactly when JSON.parse refuses", () => {
    for (let seed = 1; seed <= 6000; seed++) {
      const r = random(seed);
      const text = objectText(r, 0);
      const at = r.int(text.length + 1);
      const c = r.pick(['"', "\\", "{", "}", "[", "]", ",", ":", " ", "x", "1", "\u0001", "e", "-", "."]);
      const mutated = [
        text.slice(0, at) + c + text.slice(at + 1),
        text.slice(0, at) + c + text.slice(at),
        text.slice(0, at) + text.slice(at + 1),
      ][r.int(3)]!;
      const want = jsonParseView(mutated);
      const got = gatewayView(bytesOf(mutated));
      if (!want.ok || !got.ok) {
        expect({ seed, ok: got.ok, code: got.ok ? null : got.code }).toEqual({
          seed,
          ok: false,
          code: want.ok ? null : want.code,
        });
        continue;
      }
      expectSame(got.value, want.value);
    }
  });
});

describe("cases by hand", () => {
  test("a short body is parsed whole; a long one by the scan, its large values when read", () => {
    expect(
      Object.getOwnPropertyDescriptor(requestBodyOf(bytesOf(`{"messages":["${"x".repeat(1000)}"]}`)), "messages")!.get,
    ).toBeUndefined();
    expect(
      Object.getOwnPropertyDescriptor(requestBodyOf(bytesOf(`{"messages":["${"x".repeat(5000)}"]}`)), "messages")!.get,
    ).toBeDefined();
  });

  test("a repeated key: its last value, in its first place", () => {
    const body = scanned(bytesOf('{"model":"a","stream":true,"model":"b"}'));
    expect(Object.keys(body)).toEqual(["model", "stream"]);
    expect(body.model).toBe("b");
  });

  test("escapes in keys and values: `mod\\u0065l` is `model`, `\\/` is `/`", () => {
    const body = scanned(bytesOf('{"mod\\u0065l":"acme\\/gpt","m\\"x":1}'));
    expect(body.model).toBe("acme/gpt");
    expect(body['m"x']).toBe(1);
  });

  test("`__proto__` is a field, not the object's prototype", () => {
    const body = scanned(bytesOf('{"__proto__":{"polluted":true},"model":"x"}'));
    expect(Object.getPrototypeOf(body)).toBe(Object.prototype);
    expect(Object.keys(body)).toEqual(["__proto__", "model"]);
    expect((body as any).polluted).toBeUndefined();
  });

  test("deep nesting: skipped as brackets, read when asked for; unbalanced brackets refused", () => {
    const deep = "[".repeat(100_000) + "]".repeat(100_000);
    const body = scanned(bytesOf(`{"model":"x","metadata":${deep}}`));
    expect(body.model).toBe("x");
    let level = body.metadata;
    for (let i = 1; i < 100_000; i++) level = level[0];
    expect(level).toEqual([]);
    expect(gatewayView(bytesOf(`{"model":"x","metadata":${"[".repeat(1000)}${"]".repeat(999)}}`))).toEqual({
      ok: false,
      code: "invalid_json",
    });
    expect(gatewayView(bytesOf(`{"model":"x","metadata":[{]}}`))).toEqual({ ok: false, code: "invalid_json" });
  });

  test("huge strings with escaped quotes and backslash runs", () => {
    const text = "x".repeat(300_000) + '\\"' + "\\\\".repeat(7) + "y".repeat(50) + "\\\\";
    const body = scanned(bytesOf(`{"messages":[{"content":"${text}"}],"model":"m"}`));
    expect(body.model).toBe("m");
    expect(body.messages[0].content).toBe(JSON.parse(`"${text}"`));
  });

  test("numbers as JSON.parse reads them", () => {
    const body = scanned(bytesOf('{"a":-0,"b":1e400,"c":12345678901234567890,"d":0.1e+2,"max_tokens":4096}'));
    expect(body).toEqual(JSON.parse('{"a":-0,"b":1e400,"c":12345678901234567890,"d":0.1e+2,"max_tokens":4096}'));
    expect(gatewayView(bytesOf('{"a":01}'))).toEqual({ ok: false, code: "invalid_json" });
    expect(gatewayView(bytesOf('{"a":1.}'))).toEqual({ ok: false, code: "invalid_json" });
  });

  test("not an object: the whole parse's answers", () => {
    expect(gatewayView(bytesOf("[1,2]"))).toEqual({ ok: false, code: "invalid_request" });
    expect(gatewayView(bytesOf('"x"'))).toEqual({ ok: false, code: "invalid_request" });
    expect(gatewayView(bytesOf(""))).toEqual({ ok: false, code: "invalid_json" });
    expect(gatewayView(bytesOf("{} x"))).toEqual({ ok: false, code: "invalid_json" });
  });

  test("a large value is parsed only when read, and a field set replaces it", () => {
    const members = topLevelMembers(bytesOf(`{"model":"x","messages":[${'"hi",'.repeat(100)}"hi"]}`))!;
    expect([...members.keys()]).toEqual(["model", "messages"]);
    const body = fieldsOf(bytesOf(`{"model":"x","messages":[${'"hi",'.repeat(100)}"hi"]}`), 0)!;
    expect(Object.getOwnPropertyDescriptor(body, "messages")!.get).toBeDefined();
    expect(body.messages.length).toBe(101);
    expect(Object.getOwnPropertyDescriptor(body, "messages")!.value.length).toBe(101);
    const other = fieldsOf(bytesOf(`{"messages":[${'"hi",'.repeat(100)}"hi"]}`), 0)!;
    other.messages = [];
    expect(other.messages).toEqual([]);
  });
});

describe("mentions: whether a walk of a field for some JSON strings may find them", () => {
  const long = "x".repeat(1000);
  const IMAGE = jsonTokens('"image"');
  test("a field that does not hold the string literally, nor any escape spelling ASCII, mentions nothing", () => {
    expect(
      mentions(
        scanned(bytesOf(`{"messages":[{"type":"text","text":"${long} \\u00e9 \\u001b[0m"}]}`)),
        "messages",
        IMAGE,
      ),
    ).toBe(false);
  });
  test("the string literally, or any escape that could spell it, is a mention", () => {
    const body = (text: string) => scanned(bytesOf(`{"messages":[{"type":${text},"text":"${long}"}]}`));
    expect(mentions(body('"image"'), "messages", IMAGE)).toBe(true);
    expect(mentions(body('"imag\\u0065"'), "messages", IMAGE)).toBe(true);
  });
  test("only the field's own value counts; a field the body lacks mentions nothing", () => {
    const body = scanned(bytesOf(`{"tools":[{"type":"image"}],"messages":[{"type":"text","text":"${long}"}]}`));
    expect(mentions(body, "messages", IMAGE)).toBe(false);
    expect(mentions(body, "tools", IMAGE)).toBe(true);
    expect(mentions(body, "input", IMAGE)).toBe(false);
  });
  test("an object the gateway did not read from bytes, or a short body parsed whole, mentions everything", () => {
    expect(mentions({ messages: [] }, "messages", IMAGE)).toBe(true);
    expect(mentions(requestBodyOf(bytesOf('{"messages":[{"type":"text","text":"hi"}]}')), "messages", IMAGE)).toBe(
      true,
    );
  });
});

describe("the walks the bytes let skip agree with the walks over a whole parse", () => {
  const catalog = loadCatalog().llm;
  const sonnet = catalog.get("claude-sonnet-4-5")!;
  const gpt = catalog.get("gpt-5.2")!;
  /** A long conversation around `extra`, so that its bytes are what the walks would search. */
  const long = (extra: object) => ({
    model: "m",
    max_tokens: 10,
    messages: [{ role: "user", content: "x".repeat(6000) }],
    ...extra,
  });
  const outcome = (f: () => unknown) => {
    try {
      return { value: f() };
    } catch (e) {
      return { refused: (e as ApiError).code };
    }
  };
  const both = (body: object, f: (b: Record<string, any>) => unknown) => {
    const text = JSON.stringify(body);
    expect(outcome(() => f(requestBodyOf(bytesOf(text))))).toEqual(outcome(() => f(JSON.parse(text))));
  };

  test("fees for tools", () => {
    const cases: Array<[keyof typeof protocols, object]> = [
      ["anthropic", long({ tools: [{ type: "web_search_20250305", name: "web_search", max_uses: 2 }] })],
      ["anthropic", long({ tools: [{ type: "code_execution_20250522", name: "code" }] })],
      ["anthropic", long({ tools: [{ type: "custom", name: "web_search_like", input_schema: {} }] })],
      ["responses", long({ tools: [{ type: "file_search" }] })],
      ["responses", long({ tools: [{ type: "web_search" }], max_tool_calls: 3 })],
      ["chat", long({ tools: [{ type: "function", function: { name: "f" } }], service_tier: "priority" })],
    ];
    for (const [proto, body] of cases)
      both(body, (b) => paidToolUse(protocols[proto].paidTools!, b, proto === "anthropic" ? sonnet : gpt));
  });

  test("a type spelled with an escape is still found", () => {
    const text = JSON.stringify(long({})).replace(
      '"messages":[',
      '"messages":[{"role":"user","content":[{"type":"image_ur\\u006c","image_url":{"url":"https://x/a.png"}}]},',
    );
    const body = requestBodyOf(bytesOf(text));
    expect(planHold(protocols.chat, body, text.length, gpt, NO_PAID_TOOLS).inputTokens).toBe(
      planHold(protocols.chat, JSON.parse(text), text.length, gpt, NO_PAID_TOOLS).inputTokens,
    );
    expect(planHold(protocols.chat, body, text.length, gpt, NO_PAID_TOOLS).inputTokens).toBeGreaterThan(
      Math.ceil(text.length / 3),
    );
  });

  test("other providers' reasoning dropped from a long history", () => {
    const thinking = (signature?: string) => ({
      role: "assistant",
      content: [
        { type: "thinking", thinking: "t", ...(signature !== undefined && { signature }) },
        { type: "text", text: "a" },
      ],
    });
    for (const turn of [
      thinking("sig-from-anthropic"),
      thinking(),
      thinking("sy1.openai.abc"),
      { role: "assistant", content: "plain" },
    ]) {
      both(long({ messages: [{ role: "user", content: "x".repeat(6000) }, turn] }), (b) =>
        withoutForeignReasoning("anthropic", b, "anthropic"),
      );
    }
    for (const item of [
      { type: "reasoning", encrypted_content: "sy1.anthropic.abc" },
      { type: "reasoning", encrypted_content: "sy1.openai.abc" },
      { type: "reasoning", encrypted_content: "native" },
    ]) {
      both({ model: "m", input: [{ role: "user", content: "x".repeat(6000) }, item] }, (b) =>
        withoutForeignReasoning("responses", b, "openai"),
      );
    }
  });
});
