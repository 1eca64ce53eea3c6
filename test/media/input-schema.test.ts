import { describe, expect, test } from "bun:test";
import { checkInputSchema, toJsonSchema, validateInput, type InputSchema } from "../../src/media/input-schema";

const schema: InputSchema = {
  properties: {
    prompt: { type: "string", description: "Prompt", minLength: 1, maxLength: 10 },
    resolution: { type: "string", description: "Size", enum: ["720p", "1080p"], default: "720p" },
    duration: { type: "integer", description: "Seconds", enum: [5, 10], default: 5 },
    strength: { type: "number", description: "0..1", minimum: 0, maximum: 1 },
    sound: { type: "boolean", description: "Audio", default: false },
    image_url: { type: "url", description: "Start frame" },
    image_urls: { type: "array", description: "References", items: "url", maxItems: 2 },
    tags: { type: "array", description: "Tags", items: "string", minItems: 1 },
  },
  required: ["prompt"],
};

function bad(input: unknown) {
  const r = validateInput(schema, input);
  if (r.ok) throw new Error(`expected a validation error for ${JSON.stringify(input)}`);
  return r;
}

describe("validateInput", () => {
  test("applies defaults and keeps given values", () => {
    const r = validateInput(schema, { prompt: "fox", strength: 0.3 });
    expect(r).toEqual({
      ok: true,
      value: { prompt: "fox", strength: 0.3, resolution: "720p", duration: 5, sound: false },
    });
  });

  test("names a missing required field", () => {
    expect(bad({ resolution: "720p" })).toMatchObject({ field: "prompt", message: '"prompt" is required' });
  });

  test("names a wrong enum value and lists the allowed ones", () => {
    const r = bad({ prompt: "x", resolution: "4k" });
    expect(r.field).toBe("resolution");
    expect(r.message).toContain('"720p", "1080p"');
    expect(bad({ prompt: "x", duration: 7 }).field).toBe("duration");
  });

  test("names an out-of-range number", () => {
    expect(bad({ prompt: "x", strength: 1.5 })).toMatchObject({
      field: "strength",
      message: '"strength" must be at most 1',
    });
    expect(bad({ prompt: "x", strength: -0.1 }).message).toBe('"strength" must be at least 0');
  });

  test("rejects an unknown field by name, so a typo cannot silently change the price", () => {
    const r = bad({ prompt: "x", resolutoin: "1080p" });
    expect(r.field).toBe("resolutoin");
    expect(r.message).toContain("unknown field");
    expect(r.message).toContain("resolution");
  });

  test("rejects non-object input", () => {
    for (const v of [null, [], "prompt", 3, undefined]) expect(bad(v).field).toBe("input");
  });

  test("accepts numeric strings for numbers (kie clients send durations as strings)", () => {
    const r = validateInput(schema, { prompt: "x", duration: "10", strength: "0.5" });
    expect(r.ok && r.value.duration).toBe(10);
    expect(r.ok && r.value.strength).toBe(0.5);
    expect(bad({ prompt: "x", duration: "10.5" }).field).toBe("duration");
    expect(bad({ prompt: "x", duration: "ten" }).field).toBe("duration");
  });

  test("null counts as absent", () => {
    const r = validateInput(schema, { prompt: "x", resolution: null, image_url: null });
    expect(r).toEqual({ ok: true, value: { prompt: "x", resolution: "720p", duration: 5, sound: false } });
    expect(bad({ prompt: null }).field).toBe("prompt");
  });

  test("checks types, lengths (in code points), URLs and array items", () => {
    expect(bad({ prompt: "" }).message).toBe('"prompt" must not be empty');
    expect(bad({ prompt: "01234567890" }).field).toBe("prompt");
    expect(validateInput(schema, { prompt: "😀".repeat(10) }).ok).toBe(true);
    expect(bad({ prompt: 5 }).message).toBe('"prompt" must be a string');
    expect(bad({ prompt: "x", sound: "yes" }).field).toBe("sound");
    expect(bad({ prompt: "x", image_url: "ftp://a/b.png" }).field).toBe("image_url");
    expect(bad({ prompt: "x", image_url: "javascript:alert(1)" }).field).toBe("image_url");
    expect(bad({ prompt: "x", image_urls: "https://a/b.png" }).field).toBe("image_urls");
    expect(bad({ prompt: "x", image_urls: ["https://a/1.png", "nope"] }).field).toBe("image_urls[1]");
    expect(bad({ prompt: "x", image_urls: ["https://a/1", "https://a/2", "https://a/3"] }).message).toContain(
      "at most 2",
    );
    expect(bad({ prompt: "x", tags: [] }).field).toBe("tags");
    expect(validateInput(schema, { prompt: "x", tags: ["a"], image_urls: ["http://h/1.png"] }).ok).toBe(true);
  });
});

describe("checkInputSchema", () => {
  const withProp = (p: unknown, required: string[] = []) => ({ properties: { f: p }, required });
  const cases: Array<[string, unknown, string]> = [
    ["not an object", null, "must be an object"],
    ["no properties", { properties: {}, required: [] }, "non-empty"],
    [
      "required unknown",
      { properties: { f: { type: "string", description: "d" } }, required: ["g"] },
      "unknown property",
    ],
    [
      "unknown top key",
      { properties: { f: { type: "string", description: "d" } }, required: [], extra: 1 },
      'unknown key "extra"',
    ],
    [
      "a prototype member's name",
      JSON.parse('{"properties":{"__proto__":{"type":"string","description":"d"}},"required":[]}'),
      "Object.prototype member",
    ],
    [
      "required names a prototype member",
      { properties: { f: { type: "string", description: "d" } }, required: ["toString"] },
      "unknown property",
    ],
    ["unknown keyword", withProp({ type: "string", description: "d", pattern: "x" }), 'unknown keyword "pattern"'],
    ["bad type", withProp({ type: "object", description: "d" }), "type must be one of"],
    ["no description", withProp({ type: "string" }), "description is required"],
    ["minimum on string", withProp({ type: "string", description: "d", minimum: 1 }), "minimum needs a numeric type"],
    ["maxItems on string", withProp({ type: "string", description: "d", maxItems: 1 }), "maxItems needs type array"],
    ["items on string", withProp({ type: "string", description: "d", items: "url" }), "items must be"],
    ["enum on boolean", withProp({ type: "boolean", description: "d", enum: [true] }), "enum is only for"],
    ["enum of wrong type", withProp({ type: "integer", description: "d", enum: ["5"] }), "literal"],
    [
      "default outside enum",
      withProp({ type: "string", description: "d", enum: ["a"], default: "b" }),
      'default "b" is invalid',
    ],
    ["default of wrong type", withProp({ type: "integer", description: "d", default: "5" }), "literal"],
    ["default out of range", withProp({ type: "number", description: "d", maximum: 1, default: 2 }), "is invalid"],
  ];
  for (const [name, def, msg] of cases) {
    test(`rejects: ${name}`, () => expect(() => checkInputSchema(def)).toThrow(msg));
  }

  test("accepts a good definition", () => expect(() => checkInputSchema(schema)).not.toThrow());
});

describe("toJsonSchema", () => {
  test("emits draft 2020-12 with closed objects, uri formats and keywords", () => {
    const js = toJsonSchema(schema) as any;
    expect(js.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    expect(js.type).toBe("object");
    expect(js.additionalProperties).toBe(false);
    expect(js.required).toEqual(["prompt"]);
    expect(js.properties.image_url).toEqual({ description: "Start frame", type: "string", format: "uri" });
    expect(js.properties.image_urls).toEqual({
      description: "References",
      type: "array",
      items: { type: "string", format: "uri" },
      maxItems: 2,
    });
    expect(js.properties.tags.items).toEqual({ type: "string" });
    expect(js.properties.duration).toEqual({ description: "Seconds", type: "integer", enum: [5, 10], default: 5 });
    expect(js.properties.prompt).toMatchObject({ type: "string", minLength: 1, maxLength: 10 });
  });
});
