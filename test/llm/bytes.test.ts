// tokenCounter counts a token in bytes that arrive in chunks, however the chunks cut it.
import { expect, test } from "bun:test";
import { tokenCounter } from "../../src/llm/bytes";

test("every occurrence once, including those split between chunks, at any cut", () => {
  const text =
    '{"output":[{"type":"web_search_call"},{"type": "web_search_call"},{"type":"message","text":"\\"web_search_call\\""}]}';
  const bytes = new TextEncoder().encode(text);
  for (let cut = 0; cut <= bytes.length; cut++) {
    for (const second of [cut, Math.min(bytes.length, cut + 7)]) {
      const c = tokenCounter('"web_search_call"');
      c.feed(bytes.subarray(0, cut));
      c.feed(bytes.subarray(cut, second));
      c.feed(bytes.subarray(second));
      expect(c.count).toBe(2); // the escaped one inside a text is not a token
    }
  }
});

test("fed one byte at a time: still every occurrence once", () => {
  const bytes = new TextEncoder().encode(
    '{"a":"web_search_call","output":[{"type":"web_search_call"},{"x":"\\"web_search_call\\""}]}',
  );
  const c = tokenCounter('"web_search_call"');
  for (let i = 0; i < bytes.length; i++) c.feed(bytes.subarray(i, i + 1));
  expect(c.count).toBe(2);
});
