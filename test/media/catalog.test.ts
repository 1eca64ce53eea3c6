import { describe, expect, test } from "bun:test";
import builtin from "../../src/catalog/media-models.json";
import { LIFECYCLE_KEYS } from "../../src/catalog/lifecycle";
import type { InputSchema } from "../../src/media/input-schema";
import { compileMediaCatalog, compileMediaModel, toUpstreamInput, type MediaModel } from "../../src/media/model";
import { requestedFacts, UnpricedInputError } from "../../src/media/pricing";

// Status, source and the other lifecycle fields belong to the catalog, not to the media model: the catalog's loader
// splits them off (catalog/service.ts) before compiling the rest.
const data: unknown[] = (builtin as Array<Record<string, unknown>>).map((e) =>
  Object.fromEntries(Object.entries(e).filter(([k]) => !(LIFECYCLE_KEYS as readonly string[]).includes(k))),
);
const catalog = compileMediaCatalog(data);
const models = [...catalog.values()];

/** A minimal valid input: only the required fields, with plausible values. */
function sampleInput(schema: InputSchema): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const name of schema.required) {
    const d = schema.properties[name]!;
    if (d.enum) input[name] = d.enum[0];
    else if (d.type === "string") input[name] = "a red fox running through fresh snow".slice(0, d.maxLength ?? 100);
    else if (d.type === "url") input[name] = `https://files.example.com/${name}.bin`;
    else if (d.type === "array")
      input[name] = Array.from({ length: d.minItems ?? 1 }, (_, i) =>
        d.items === "string" ? `item ${i}` : `https://files.example.com/${name}-${i}.png`,
      );
    else if (d.type === "boolean") input[name] = true;
    else input[name] = d.minimum ?? 1;
  }
  return input;
}

/** Every combination of the values of the fields a price table is keyed by. */
function combinations(m: MediaModel): Array<Record<string, unknown>> {
  let combos: Array<Record<string, unknown>> = [{}];
  for (const f of m.pricingRule.by ?? []) {
    const d = m.input.properties[f]!;
    const values = d.type === "boolean" ? [false, true] : d.enum!;
    combos = combos.flatMap((c) => values.map((v) => ({ ...c, [f]: v })));
  }
  return combos;
}

describe("catalog", () => {
  test("has at least 80 models and every entry compiles", () => {
    expect(Array.isArray(data)).toBe(true);
    expect(catalog.size).toBe((data as unknown[]).length);
    expect(catalog.size).toBeGreaterThanOrEqual(80);
    for (const entry of data as unknown[]) expect(() => compileMediaModel(entry)).not.toThrow();
  });

  test("covers every kind and every upstream protocol", () => {
    const kinds = new Set(models.map((m) => m.kind));
    for (const k of [
      "text-to-image",
      "image-edit",
      "text-to-video",
      "image-to-video",
      "video-to-video",
      "music",
      "speech",
      "sound",
    ]) {
      expect(kinds.has(k as never)).toBe(true);
    }
    const providers = new Set(models.flatMap((m) => m.routes.map((r) => r.provider)));
    expect([...providers].sort()).toEqual(["fal", "kie", "kie-suno", "openai-images", "replicate", "veo"]);
  });

  test("some models have a second route on another upstream, for fail-over", () => {
    const multi = models.filter((m) => new Set(m.routes.map((r) => r.provider)).size > 1);
    expect(multi.map((m) => m.id)).toEqual(
      expect.arrayContaining(["veo-3.1-generate-preview", "veo-3.1-fast-generate-preview"]),
    );
    expect(catalog.get("veo-3.1-generate-preview")!.routes.map((r) => r.provider)).toEqual(["veo", "fal"]);
  });

  test("deadlines fit the kind of output", () => {
    for (const m of models) {
      const least = { image: 300, video: 900, audio: 300 }[m.type];
      expect(m.deadline_seconds).toBeGreaterThanOrEqual(least);
    }
  });

  test("rejects duplicate ids", () => {
    const first = (data as unknown[])[0];
    expect(() => compileMediaCatalog([first, first])).toThrow("duplicate id");
  });

  test("wire templates shape what an upstream receives", () => {
    const veo = catalog.get("veo-3.1-generate-preview")!;
    const r = veo.prepare({ prompt: "p", duration: 6 });
    if (!r.ok) throw new Error(r.message);
    expect(toUpstreamInput(veo.routes[0]!, r.value).duration).toBe(6);
    expect(toUpstreamInput(veo.routes[1]!, r.value).duration).toBe("6s");
    const kling = catalog.get("kling-3.0/video")!;
    expect(toUpstreamInput(kling.routes[0]!, { prompt: "p", duration: 5 })).toEqual({ prompt: "p", duration: "5" });
  });
});

describe.each(models.map((m) => [m.id, m] as const))("%s", (_id, m) => {
  const input = sampleInput(m.input);

  test("a sample input passes and prices to a positive number of whole credits", () => {
    const r = m.prepare(input);
    if (!r.ok) throw new Error(`${r.field}: ${r.message}`);
    expect(r.estimate).toBeGreaterThan(0);
    expect(r.estimate % 1_000_000).toBe(0);
    for (const name of m.input.required) expect(r.value[name]).toBeDefined();
  });

  test("estimate equals the actual cost when the output matches the request", () => {
    const r = m.prepare(input);
    if (!r.ok) throw new Error(r.message);
    const facts = requestedFacts(m.pricing, r.value);
    expect(m.actual(r.value, facts)).toBe(r.estimate);
    expect(m.actual(r.value, {})).toBe(r.estimate);
  });

  test("every priced combination estimates equal to actual; the others name a field", () => {
    for (const combo of combinations(m)) {
      const r = m.prepare({ ...input, ...combo });
      if (!r.ok) {
        expect(Object.keys(combo)).toContain(r.field);
        continue;
      }
      expect(m.actual(r.value, requestedFacts(m.pricing, r.value))).toBe(r.estimate);
    }
  });

  test("validation names a missing required field and an unknown field", () => {
    for (const name of m.input.required) {
      const { [name]: _, ...rest } = input;
      expect(m.prepare(rest)).toMatchObject({ ok: false, field: name });
    }
    expect(m.prepare({ ...input, not_a_field: 1 })).toMatchObject({ ok: false, field: "not_a_field" });
  });

  test("publishes a JSON Schema and price rows", () => {
    expect(m.jsonSchema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    expect(m.jsonSchema.additionalProperties).toBe(false);
    expect(m.priceRows.length).toBeGreaterThan(0);
    for (const row of m.priceRows) expect(row.usd).toMatch(/^\d+\.\d{2,9}$/);
  });
});

test("only the combinations the upstreams really lack are unpriced", () => {
  const unpriced: string[] = [];
  for (const m of models) {
    for (const combo of combinations(m)) {
      try {
        m.estimate({ ...sampleInput(m.input), ...defaultsOf(m.input), ...combo });
      } catch (e) {
        if (!(e instanceof UnpricedInputError)) throw e;
        unpriced.push(`${m.id} ${JSON.stringify(combo)}`);
      }
    }
  }
  expect(unpriced.sort()).toEqual([
    `fal-ai/pixverse/v5.5/image-to-video {"resolution":"1080p","duration":8}`,
    `fal-ai/pixverse/v5.5/text-to-video {"resolution":"1080p","duration":8}`,
    `hailuo/2-3-image-to-video-pro {"resolution":"1080P","duration":10}`,
  ]);
});

function defaultsOf(schema: InputSchema): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(schema.properties)
      .filter(([, d]) => d.default !== undefined)
      .map(([k, d]) => [k, d.default]),
  );
}
