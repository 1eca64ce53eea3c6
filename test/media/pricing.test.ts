import { describe, expect, test } from "bun:test";
import builtin from "../../src/catalog/media-models.json";
import { LIFECYCLE_KEYS } from "../../src/catalog/lifecycle";
import { compileMediaCatalog, compileMediaModel, type MediaModel } from "../../src/media/model";
import {
  actualCost,
  describePricing,
  estimateCost,
  formatUsd,
  UnpricedInputError,
  type CostFacts,
} from "../../src/media/pricing";
import { checkPricingRule, type PricingRule } from "../../src/media/pricing-rules";

// Status, source and the other lifecycle fields belong to the catalog, not to the media model: the catalog's loader
// splits them off (catalog/service.ts) before compiling the rest.
const data: unknown[] = (builtin as Array<Record<string, unknown>>).map((e) =>
  Object.fromEntries(Object.entries(e).filter(([k]) => !(LIFECYCLE_KEYS as readonly string[]).includes(k))),
);
const catalog = compileMediaCatalog(data);
const credits = (n: number) => n * 1_000_000; // whole credits → µcr

function price(id: string, input: Record<string, unknown>, facts?: CostFacts): number {
  const m = catalog.get(id) as MediaModel;
  const r = m.prepare(input);
  if (!r.ok) throw new Error(`${id}: ${r.field}: ${r.message}`);
  return facts ? m.actual(r.value, facts) : r.estimate;
}

// Every expected number below is worked out by hand from media-upstreams.md (1 credit = 0.001 USD, rounded up).
describe("estimates on concrete examples", () => {
  const cases: Array<[string, Record<string, unknown>, number, string]> = [
    ["kling-3.0/video", { prompt: "p", mode: "pro", duration: 5 }, 450, "0.09/s × 5 s = 0.45"],
    ["kling-3.0/video", { prompt: "p", sound: true, duration: 7 }, 700, "std with sound 0.10/s × 7"],
    ["kling-3.0/video", { prompt: "p", mode: "4K", duration: 15 }, 5025, "0.335 × 15 = 5.025"],
    ["nano-banana-pro", { prompt: "p", resolution: "4K" }, 120, "0.12 per 4K image"],
    ["seedream/4.5-text-to-image", { prompt: "p" }, 33, "0.0325 = 32.5 credits, rounded up"],
    ["google/imagen4-fast", { prompt: "p", num_images: 3 }, 60, "0.02 × 3"],
    ["grok-imagine/text-to-image", { prompt: "p" }, 20, "0.02 per request of 6 images"],
    ["ideogram/v3-text-to-image", { prompt: "p", rendering_speed: "TURBO", num_images: 4 }, 70, "0.0175 × 4"],
    ["ideogram/v3-text-to-image", { prompt: "p", rendering_speed: "QUALITY", num_images: 3 }, 150, "0.05 × 3"],
    ["qwen/text-to-image", { prompt: "p" }, 21, "0.02 × 1.048576 MP = 0.02097152"],
    ["qwen/text-to-image", { prompt: "p", image_size: "landscape_16_9" }, 12, "0.02 × 0.589824 MP = 0.01179648"],
    [
      "qwen/image-edit",
      { prompt: "p", image_url: "https://x/a.png", num_images: 2 },
      63,
      "0.03 × 1.048576 × 2 = 0.06291456",
    ],
    ["gpt-image-1", { prompt: "p", quality: "high", size: "1024x1536", n: 2 }, 500, "0.25 × 2"],
    ["gpt-image-1", { prompt: "p" }, 42, "medium 1024² 0.042"],
    ["kling-2.6/text-to-video", { prompt: "p", duration: 10, sound: true }, 1100, "0.55 per 10 s, doubled with audio"],
    ["fal-ai/kling-video/v2.5-turbo/pro/text-to-video", { prompt: "p", duration: 10 }, 700, "0.35 + 5 × 0.07"],
    ["fal-ai/kling-video/v2.5-turbo/pro/text-to-video", { prompt: "p" }, 350, "0.35 per 5 s"],
    [
      "fal-ai/kling-video/v3/turbo/pro/text-to-video",
      { prompt: "p" },
      700,
      "0.14/s × 5 s (fal's page: a 5 s video costs 0.70)",
    ],
    ["fal-ai/kling-video/v3/turbo/pro/text-to-video", { prompt: "p", duration: 15 }, 2100, "0.14/s × 15 s"],
    ["fal-ai/ltx-2.3/text-to-video", { prompt: "p", resolution: "2160p", duration: 10 }, 3200, "0.32/s × 10 s"],
    ["fal-ai/ltx-2.3/text-to-video", { prompt: "p" }, 480, "1080p 0.08/s × 6 s"],
    [
      "fal-ai/kling-video/v2.5-turbo/standard/image-to-video",
      { prompt: "p", image_url: "https://x/a.png", duration: 10 },
      420,
      "0.21 + 5 × 0.042",
    ],
    ["wan/2-6-text-to-video", { prompt: "p", resolution: "1080p", duration: 15 }, 1575, "table 1.575"],
    ["elevenlabs/text-to-speech-multilingual-v2", { text: "a".repeat(1500) }, 90, "0.06 × 1.5k chars"],
    ["elevenlabs/text-to-speech-multilingual-v2", { text: "a" }, 1, "0.00006 rounds up to one credit"],
    ["elevenlabs/text-to-speech-turbo-2-5", { text: "a".repeat(2345) }, 71, "0.03 × 2.345 = 0.07035"],
    ["elevenlabs/sound-effect-v2", { text: "rain" }, 27, "held for 22 s × 0.0012 = 0.0264"],
    ["elevenlabs/sound-effect-v2", { text: "rain", duration_seconds: 0.5 }, 1, "0.5 s × 0.0012 = 0.0006"],
    ["suno/v5", { prompt: "a song" }, 60, "0.06 per generate request"],
    [
      "kling/ai-avatar-standard",
      { image_url: "https://x/a.png", audio_url: "https://x/a.mp3" },
      2400,
      "held 60 s × 0.04",
    ],
    ["veo-3.1-generate-preview", { prompt: "p" }, 3200, "8 s × 0.40"],
    ["bytedance/seedance-2", { prompt: "p", resolution: "4k", duration: 15 }, 15600, "1.04 × 15"],
    ["fal-ai/minimax/hailuo-02/pro/text-to-video", { prompt: "p" }, 480, "fixed 6 s × 0.08"],
    ["fal-ai/minimax/hailuo-2.3/pro/text-to-video", { prompt: "p" }, 490, "one clip 0.49"],
    ["hailuo/02-text-to-video-pro", { prompt: "p" }, 285, "one 6 s clip 0.285"],
    ["recraft/crisp-upscale", { image: "https://x/a.png" }, 3, "0.0025 = 2.5 credits, rounded up"],
    ["z-image", { prompt: "p" }, 4, "0.004"],
    ["black-forest-labs/flux-schnell", { prompt: "p", num_outputs: 4 }, 12, "0.003 × 4"],
    ["wan/2-2-a14b-text-to-video-turbo", { prompt: "p", resolution: "480p" }, 200, "0.20 per 5 s clip"],
  ];
  for (const [id, input, expected, why] of cases) {
    test(`${id} ${JSON.stringify(input).slice(0, 60)} = ${expected} credits (${why})`, () => {
      expect(price(id, input)).toBe(credits(expected));
    });
  }
});

describe("actual cost from the real output", () => {
  test("equals the estimate with no facts", () => {
    expect(price("kling-3.0/video", { prompt: "p", mode: "pro" }, {})).toBe(credits(450));
  });

  test("per second follows the real duration, ignoring sub-half-second container jitter", () => {
    const k = { prompt: "p", mode: "pro", duration: 5 };
    expect(price("kling-3.0/video", k, { seconds: 5.04 })).toBe(credits(450));
    expect(price("kling-3.0/video", k, { seconds: 4.6 })).toBe(credits(450));
    expect(price("kling-3.0/video", k, { seconds: 4.4 })).toBe(credits(396)); // 0.09 × 4.4
    expect(price("kling-3.0/video", k, { seconds: 12 })).toBe(credits(450)); // never above the estimate
  });

  test("a clip table follows the delivered clip length", () => {
    expect(price("kling-2.6/text-to-video", { prompt: "p", duration: 10, sound: true }, { seconds: 5 })).toBe(
      credits(550),
    );
  });

  test("base + extra seconds follows the delivered length", () => {
    const id = "fal-ai/kling-video/v2.5-turbo/pro/text-to-video";
    expect(price(id, { prompt: "p", duration: 10 }, { seconds: 7.2 })).toBe(credits(504)); // 0.35 + 2.2 × 0.07
  });

  test("lengths that follow an input file are settled to the real length", () => {
    const input = { image_url: "https://x/a.png", audio_url: "https://x/a.mp3" };
    expect(price("kling/ai-avatar-standard", input, { seconds: 12.3 })).toBe(credits(492)); // 0.04 × 12.3
    expect(price("elevenlabs/sound-effect-v2", { text: "rain" }, { seconds: 10 })).toBe(credits(12));
  });

  test("image counts: fewer images cost less, more never cost more", () => {
    expect(price("black-forest-labs/flux-schnell", { prompt: "p", num_outputs: 4 }, { images: 2 })).toBe(credits(6));
    expect(price("black-forest-labs/flux-schnell", { prompt: "p", num_outputs: 1 }, { images: 4 })).toBe(credits(3));
    expect(price("grok-imagine/text-to-image", { prompt: "p" }, { images: 6 })).toBe(credits(20));
    expect(price("grok-imagine/text-to-image", { prompt: "p" }, { images: 3 })).toBe(credits(20)); // one group of 6
    expect(price("google/nano-banana", { prompt: "p" }, { images: 0 })).toBe(0);
  });

  test("characters come from the facts when given", () => {
    expect(price("elevenlabs/text-to-speech-multilingual-v2", { text: "a".repeat(1500) }, { characters: 1000 })).toBe(
      credits(60),
    );
  });

  test("upstream-reported cost settles rules that opt in, capped at the estimate", () => {
    const input = { prompt: "p", quality: "high", size: "1024x1536", n: 2 };
    expect(price("gpt-image-1", input, { upstreamCostUsd: 0.3301 })).toBe(credits(331));
    expect(price("gpt-image-1", input, { upstreamCostUsd: 0.9 })).toBe(credits(500));
    // rules without settle ignore it
    expect(price("google/nano-banana", { prompt: "p" }, { upstreamCostUsd: 0.001 })).toBe(credits(20));
  });
});

describe("combinations the upstream does not offer", () => {
  test("are a validation error naming the field", () => {
    const m = catalog.get("hailuo/2-3-image-to-video-pro")!;
    const r = m.prepare({ prompt: "p", image_url: "https://x/a.png", resolution: "1080P", duration: 10 });
    expect(r).toMatchObject({ ok: false, field: "duration" });
    expect(() => estimateCost(m.pricing, { resolution: "1080P", duration: 10 })).toThrow(UnpricedInputError);
  });
});

describe("rules", () => {
  const good: PricingRule = {
    unit: "second",
    seconds_field: "duration",
    by: ["resolution"],
    usd_by: { "720p": 0.08, "1080p": "0.12" },
  };

  test("describePricing gives exact decimal strings", () => {
    expect(describePricing(good)).toEqual([
      { label: "resolution=720p", usd: "0.08", unit: "per second" },
      { label: "resolution=1080p", usd: "0.12", unit: "per second" },
    ]);
    expect(describePricing({ unit: "image", usd: 0.0325 })).toEqual([
      { label: "any", usd: "0.0325", unit: "per image" },
    ]);
    expect(describePricing({ unit: "image", usd: 0.02, images: 6, images_per_unit: 6 })[0]!.unit).toBe("per 6 images");
    expect(describePricing({ unit: "1k_chars", usd: 0.06, text_field: "text" })[0]).toEqual({
      label: "any",
      usd: "0.06",
      unit: "per 1,000 characters of text",
    });
    expect(catalog.get("fal-ai/kling-video/v2.5-turbo/pro/text-to-video")!.priceRows).toEqual([
      { label: "any", usd: "0.35", unit: "per clip of 5 s" },
      { label: "each second beyond 5", usd: "0.07", unit: "per second" },
    ]);
    expect([
      formatUsd(100_000_000),
      formatUsd(1_575_000_000),
      formatUsd(8_750_000),
      formatUsd(1),
      formatUsd(0),
    ]).toEqual(["0.10", "1.575", "0.00875", "0.000000001", "0.00"]);
  });

  test("work on raw rules too (compiled once, cached)", () => {
    expect(estimateCost(good, { duration: 5, resolution: "1080p" })).toBe(credits(600));
    expect(actualCost(good, { duration: 5, resolution: "1080p" }, { seconds: 3 })).toBe(credits(360));
  });

  const broken: Array<[string, unknown, string]> = [
    ["unknown key", { unit: "image", usd: 1, per: "x" }, 'unknown key "per"'],
    ["bad unit", { unit: "minute", usd: 1 }, "unit must be one of"],
    ["no price", { unit: "image" }, "exactly one of usd or usd_by"],
    ["both prices", { unit: "image", usd: 1, by: ["a"], usd_by: { x: 1 } }, "exactly one of usd or usd_by"],
    ["table without by", { unit: "image", usd_by: { x: 1 } }, "usd_by needs by"],
    ["table too shallow", { unit: "image", by: ["a", "b"], usd_by: { x: 1 } }, "must be a non-empty table"],
    ["sub-µcr price", { unit: "image", usd: "0.0000000001" }, "more than 9 decimals"],
    ["negative price", { unit: "image", usd: -1 }, "must not be negative"],
    ["key for another unit", { unit: "image", usd: 1, seconds_field: "duration" }, "does not apply to unit image"],
    ["chars without field", { unit: "1k_chars", usd: 1 }, "needs text_field"],
    ["second without length", { unit: "second", usd: 1 }, "needs seconds_field"],
    ["half of base+extra", { unit: "clip", usd: 1, seconds_field: "d", base_seconds: 5 }, "go together"],
    ["megapixel without size", { unit: "megapixel", usd: 1 }, "megapixels"],
    ["bad settle", { unit: "image", usd: 1, settle: "always" }, "settle"],
  ];
  for (const [name, rule, msg] of broken)
    test(`checkPricingRule rejects: ${name}`, () => expect(() => checkPricingRule(rule)).toThrow(msg));
});

describe("rules checked against the input definition", () => {
  const base = {
    id: "t/x",
    type: "video",
    kind: "text-to-video",
    name: "X",
    description: "d",
    output: "video",
    deadline_seconds: 60,
    routes: [{ provider: "kie", upstream_model: "x" }],
    input: {
      properties: {
        prompt: { type: "string", description: "p" },
        duration: { type: "integer", description: "s", enum: [5, 10], default: 5 },
        resolution: { type: "string", description: "r", enum: ["720p", "1080p"], default: "720p" },
        free: { type: "string", description: "f" },
      },
      required: ["prompt"],
    },
  };
  const withRule = (pricing: unknown) => () => compileMediaModel({ ...base, pricing });
  test("accepts a consistent rule", () =>
    expect(withRule({ unit: "second", seconds_field: "duration", usd: 1 })).not.toThrow());
  test("by must name an enum field", () =>
    expect(withRule({ unit: "clip", by: ["free"], usd_by: { a: 1 } })).toThrow("needs an enum"));
  test("by must name an existing field", () =>
    expect(withRule({ unit: "clip", by: ["mode"], usd_by: { a: 1 } })).toThrow("not an input field"));
  test("table keys must be values of the field", () =>
    expect(withRule({ unit: "clip", by: ["resolution"], usd_by: { "720p": 1, "4k": 2 } })).toThrow(
      '"4k" is not a value',
    ));
  test("text_field must be a required string", () =>
    expect(withRule({ unit: "1k_chars", text_field: "free", usd: 1 })).toThrow("must be required"));
  test("kind, type and output must agree", () =>
    expect(() => compileMediaModel({ ...base, type: "image", pricing: { unit: "request", usd: 1 } })).toThrow(
      "type must be",
    ));
  test("routes need a known provider", () =>
    expect(() =>
      compileMediaModel({
        ...base,
        routes: [{ provider: "acme", upstream_model: "x" }],
        pricing: { unit: "request", usd: 1 },
      }),
    ).toThrow("provider"));
});
