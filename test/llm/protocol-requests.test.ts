// What the protocol modules decide about requests (token limits, upstream body) and how their errors look.
import { describe, expect, test } from "bun:test";
import { anthropic, chat, embeddings, protocolForPath, protocols, responses } from "../../src/llm/protocols/index";
import { fixtureJson } from "../fakes/fixtures";
import { withoutBom, withUpstreamModel } from "../../src/llm/body";
import { SplicedBody } from "../../src/llm/protocols/common";

const bytesOf = (s: string) => new TextEncoder().encode(s);
const textOf = (b: string | Uint8Array | SplicedBody) =>
  typeof b === "string" ? b : new TextDecoder().decode(b instanceof SplicedBody ? b.toBytes() : b);
/** What goes upstream for `raw`, as text; `same`: the client's very bytes came back. */
const prep = (p: typeof chat, raw: string) => {
  const bytes = bytesOf(raw);
  const out = p.prepareUpstreamBody(JSON.parse(raw), bytes);
  return { raw: textOf(out.body), same: out.body === bytes, stripUsageChunk: out.stripUsageChunk };
};

describe("maxOutputTokens", () => {
  test("each protocol's field; undefined when absent or unusable", () => {
    expect(anthropic.maxOutputTokens({ max_tokens: 64000 })).toBe(64000);
    expect(anthropic.maxOutputTokens({})).toBeUndefined();
    expect(chat.maxOutputTokens({ max_completion_tokens: 500, max_tokens: 9 })).toBe(500);
    expect(chat.maxOutputTokens({ max_tokens: 300 })).toBe(300);
    expect(chat.maxOutputTokens({ max_tokens: 300, n: 3 })).toBe(300); // per choice; choices() says how many
    expect(chat.choices!({ max_tokens: 300, n: 3 })).toBe(3);
    expect(chat.choices!({ n: 0 })).toBe(1);
    expect(anthropic.choices?.({ n: 3 }) ?? 1).toBe(1);
    expect(chat.maxOutputTokens({ max_tokens: "300" })).toBeUndefined();
    expect(chat.maxOutputTokens({ max_tokens: 1.5 })).toBeUndefined();
    expect(responses.maxOutputTokens({ max_output_tokens: 256 })).toBe(256);
    expect(responses.maxOutputTokens({ max_tokens: 256 })).toBeUndefined();
    expect(embeddings.maxOutputTokens({ input: "x" })).toBe(0);
  });
});

describe("prepareUpstreamBody", () => {
  test("nothing to change: the client's very bytes come back", () => {
    const cases: [typeof chat, string][] = [
      [anthropic, ' {"model":"claude-sonnet-4-5","max_tokens":64000,"stream":true,"messages":[]}'],
      [chat, '{"model":"gpt-4o","stream":false,"messages":[]}'],
      [
        chat,
        '{"model":"gpt-4o","stream":true,"stream_options":{"include_usage":true},"messages":[],"temperature":1.0}',
      ],
      [responses, '{"model":"gpt-4.1","stream":true,"input":"hi"}'],
      [embeddings, '{"model":"text-embedding-3-small","input":["a","b"]}'],
    ];
    for (const [p, raw] of cases) {
      const out = prep(p, raw);
      expect(out.same).toBe(true);
      expect(out.stripUsageChunk).toBe(false);
    }
  });

  test("chat stream without stream_options: include_usage spliced in, all other bytes kept", () => {
    const raw =
      '{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"hi"}],"temperature":1.0,"seed":12345678901234567890}';
    const out = prep(chat, raw);
    expect(out.stripUsageChunk).toBe(true);
    expect(out.raw).toBe('{"stream_options":{"include_usage":true},' + raw.slice(1));
    expect(JSON.parse(out.raw).stream_options).toEqual({ include_usage: true });
  });

  test("chat stream with stream_options but no include_usage: merged, re-serialised", () => {
    const out = prep(
      chat,
      '{"model":"gpt-4o","stream":true,"stream_options":{"include_obfuscation":false},"messages":[]}',
    );
    expect(out.stripUsageChunk).toBe(true);
    expect(JSON.parse(out.raw)).toEqual({
      model: "gpt-4o",
      stream: true,
      stream_options: { include_obfuscation: false, include_usage: true },
      messages: [],
    });
    const off = prep(chat, '{"model":"gpt-4o","stream":true,"stream_options":{"include_usage":false},"messages":[]}');
    expect(off.stripUsageChunk).toBe(true);
    expect(JSON.parse(off.raw).stream_options).toEqual({ include_usage: true });
  });

  test("client asked for usage itself: nothing is stripped", () => {
    const out = prep(
      chat,
      '{"model":"gpt-4o","stream":true,"stream_options":{"include_usage":true},"messages":[],"max_credits":5}',
    );
    expect(out.stripUsageChunk).toBe(false);
    expect(JSON.parse(out.raw)).toEqual({
      model: "gpt-4o",
      stream: true,
      stream_options: { include_usage: true },
      messages: [],
    });
  });

  test("max_credits never goes upstream, on any protocol", () => {
    for (const p of Object.values(protocols)) {
      const raw = '{"model":"m","max_credits":12.5,"max_tokens":10,"input":"x","messages":[],"stream":true}';
      const out = prep(p, raw);
      expect(out.raw).not.toContain("max_credits");
      expect(JSON.parse(out.raw).model).toBe("m");
      expect(out.stripUsageChunk).toBe(p.name === "chat");
    }
  });
});

describe("usageFromBody on the recorded answers", () => {
  test("exact numbers", () => {
    expect(anthropic.usageFromBody(fixtureJson("A_nonstream.json"))).toEqual({
      input: 38,
      cacheRead: 2113,
      cacheWrite: 0,
      output: 74,
    });
    expect(chat.usageFromBody(fixtureJson("B_nonstream.json"))).toEqual({
      input: 135,
      cacheRead: 1408,
      cacheWrite: 0,
      output: 10,
    });
    expect(chat.usageFromBody(fixtureJson("B_nonstream_tool.json"))).toEqual({
      input: 82,
      cacheRead: 0,
      cacheWrite: 0,
      output: 17,
    });
    expect(responses.usageFromBody(fixtureJson("C_nonstream.json"))).toEqual({
      input: 168,
      cacheRead: 1152,
      cacheWrite: 0,
      output: 8,
    });
    expect(embeddings.usageFromBody(fixtureJson("D_float.json"))).toEqual({
      input: 9,
      cacheRead: 0,
      cacheWrite: 0,
      output: 0,
    });
    expect(embeddings.usageFromBody(fixtureJson("D_base64.json"))).toEqual({
      input: 9,
      cacheRead: 0,
      cacheWrite: 0,
      output: 0,
    });
    expect(anthropic.usageFromBody({ type: "message" })).toBeNull();
  });
});

describe("errorBody", () => {
  const e = { code: "insufficient_credits", message: "needs 1.5 credits", requestId: "req_abc" };
  test("anthropic: type by status, plus code and request_id", () => {
    const want: Record<number, string> = {
      400: "invalid_request_error",
      401: "authentication_error",
      402: "billing_error",
      403: "permission_error",
      404: "not_found_error",
      413: "request_too_large",
      422: "invalid_request_error",
      429: "rate_limit_error",
      500: "api_error",
      503: "overloaded_error",
      504: "timeout_error",
      529: "overloaded_error",
      502: "api_error",
      418: "invalid_request_error",
    };
    for (const [status, type] of Object.entries(want)) {
      expect(anthropic.errorBody({ ...e, status: Number(status), type: "ignored" })).toEqual({
        type: "error",
        error: { type, message: e.message, code: e.code },
        request_id: "req_abc",
      });
    }
  });
  test("openai family: {error:{message,type,code,param:null},request_id}", () => {
    for (const p of [chat, responses, embeddings]) {
      expect(p.errorBody({ ...e, status: 402 })).toEqual({
        error: { message: e.message, type: "insufficient_credits", code: e.code, param: null },
        request_id: "req_abc",
      });
      expect(p.errorBody({ ...e, status: 429, type: "requests" })).toMatchObject({ error: { type: "requests" } });
      expect(p.errorBody({ ...e, status: 503 })).toMatchObject({ error: { type: "server_error" } });
    }
  });
  test("request id headers and paths", () => {
    expect(anthropic.requestIdHeader).toBe("request-id");
    expect(chat.requestIdHeader).toBe("x-request-id");
    expect(protocolForPath("/v1/messages/count_tokens")?.name).toBe("anthropic");
    expect(protocolForPath("/v1/responses")?.name).toBe("responses");
    expect(protocolForPath("/v1/nope")).toBeUndefined();
  });
});

describe("withUpstreamModel: the catalog's id for a model replaced by the upstream's name for it", () => {
  const renamed = (raw: string) => {
    const out = withUpstreamModel(bytesOf(raw), "claude-opus-4-5", "claude-opus-4-5-20251101");
    return { text: textOf(out), spliced: typeof out !== "string" };
  };

  test("one top-level occurrence: spliced into the bytes, every other byte the client's (spacing, non-ASCII)", () => {
    const raw =
      '{ "model" :\n "claude-opus-4-5", "max_tokens": 10, "messages": [{"role":"user","content":"héllo ✓ — 漢字"}] }';
    expect(renamed(raw)).toEqual({
      text: raw.replace('"claude-opus-4-5"', '"claude-opus-4-5-20251101"'),
      spliced: true,
    });
  });

  test("the name also elsewhere, or any \\u escape in the body: re-serialised with the top-level model set", () => {
    for (const raw of [
      '{"model":"claude-opus-4-5","metadata":{"model":"claude-opus-4-5"},"messages":[]}',
      '{"model":"claude-opus-4-5","messages":[{"role":"user","content":"caf\\u00e9"}]}',
      '{"mod\\u0065l":"claude-opus-4-5","metadata":{"model":"claude-opus-4-5"},"messages":[]}',
    ]) {
      const out = renamed(raw);
      expect(out.spliced).toBe(false);
      const parsed = JSON.parse(out.text);
      expect(parsed.model).toBe("claude-opus-4-5-20251101");
      if (parsed.metadata) expect(parsed.metadata.model).toBe("claude-opus-4-5"); // nested fields untouched
    }
  });

  test("a name with a `/` written `\\/` somewhere: re-serialised (the one literal occurrence may be a nested one)", () => {
    const raw = '{"model":"acme\\/gpt","metadata":{"model":"acme/gpt"}}';
    const out = withUpstreamModel(bytesOf(raw), "acme/gpt", "gpt-upstream");
    expect(typeof out).toBe("string");
    expect(JSON.parse(textOf(out))).toEqual({ model: "gpt-upstream", metadata: { model: "acme/gpt" } });
  });

  test("a leading byte-order mark is not sent upstream (decoding drops it for the parse)", () => {
    const raw = bytesOf('\ufeff{"model":"m"}');
    expect(raw.length).toBe(16);
    expect(textOf(withoutBom(raw))).toBe('{"model":"m"}');
    const plain = bytesOf('{"model":"m"}');
    expect(withoutBom(plain)).toBe(plain);
  });

  test("after a chat stream's include_usage splice, both changes are in", () => {
    const raw = '{"model":"claude-opus-4-5","stream":true,"messages":[]}';
    const prepared = chat.prepareUpstreamBody(JSON.parse(raw), bytesOf(raw));
    const out = JSON.parse(textOf(withUpstreamModel(prepared.body, "claude-opus-4-5", "claude-opus-4-5-20251101")));
    expect(out).toEqual({
      stream_options: { include_usage: true },
      model: "claude-opus-4-5-20251101",
      stream: true,
      messages: [],
    });
  });
});
