// Media prices are facts with sources too: every media entry re-checked against its upstream's own page names that
// page and the day it was read, and the models the provider shut down are marked so. The research log is the media
// section of docs/catalog-sources.md.
import { describe, expect, test } from "bun:test";
import builtin from "../../src/catalog/media-models.json";
import { CATALOG_RELEASED } from "../../src/catalog/model";
import { loadCatalog } from "../../src/catalog-loader";

// The upstream's own hosts: a price repeated on any other host (a reseller, a blog, a "pricing tracker") is no source.
const UPSTREAM_HOSTS: Record<string, string[]> = {
  fal: ["fal.ai"],
  replicate: ["replicate.com"],
  kie: ["kie.ai", "docs.kie.ai"],
  "kie-suno": ["kie.ai", "docs.kie.ai"],
  "openai-images": ["developers.openai.com", "platform.openai.com", "openai.com"],
  veo: ["ai.google.dev", "cloud.google.com"],
};

/**
 * Media entries whose price could not be re-checked on the upstream's own host on the release day
 * (docs/catalog-sources.md says why). This list may only shrink.
 */
const NOT_RECHECKED = [
  "google/nano-banana",
  "nano-banana-2",
  "nano-banana-pro",
  "google/imagen4",
  "google/imagen4-fast",
  "google/imagen4-ultra",
  "seedream/4.5-text-to-image",
  "seedream/5-lite-text-to-image",
  "flux-2/pro-text-to-image",
  "flux-2/flex-text-to-image",
  "gpt-image/1.5-text-to-image",
  "gpt-image-2-text-to-image",
  "grok-imagine/text-to-image",
  "ideogram/v3-text-to-image",
  "ideogram/character",
  "qwen/text-to-image",
  "z-image",
  "wan/2-7-image",
  "wan/2-7-image-pro",
  "fal-ai/kling-image/o1",
  "fal-ai/wan-25-preview/text-to-image",
  "black-forest-labs/flux-1.1-pro",
  "black-forest-labs/flux-dev",
  "black-forest-labs/flux-schnell",
  "ideogram-ai/ideogram-v3-quality",
  "google/nano-banana-edit",
  "seedream/4.5-edit",
  "seedream/5-lite-image-to-image",
  "flux-2/pro-image-to-image",
  "flux-2/flex-image-to-image",
  "gpt-image/1.5-image-to-image",
  "gpt-image-2-image-to-image",
  "grok-imagine/image-to-image",
  "qwen/image-to-image",
  "qwen/image-edit",
  "qwen2/image-edit",
  "ideogram/v3-edit",
  "ideogram/v3-remix",
  "ideogram/character-edit",
  "ideogram/character-remix",
  "recraft/remove-background",
  "recraft/crisp-upscale",
  "topaz/image-upscale",
  "fal-ai/wan-25-preview/image-to-image",
  "kling-3.0/video",
  "kling/v3-turbo-text-to-video",
  "kling-2.6/text-to-video",
  "kling/v2-5-turbo-text-to-video-pro",
  "kling/v2-1-master-text-to-video",
  "bytedance/seedance-2",
  "bytedance/seedance-2-fast",
  "bytedance/seedance-2-mini",
  "hailuo/02-text-to-video-pro",
  "hailuo/02-text-to-video-standard",
  "wan/2-7-text-to-video",
  "wan/2-6-text-to-video",
  "wan/2-5-text-to-video",
  "wan/2-2-a14b-text-to-video-turbo",
  "grok-imagine/text-to-video",
  "happyhorse/text-to-video",
  "happyhorse-1-1/text-to-video",
  "veo-3.1-generate-preview",
  "veo-3.1-fast-generate-preview",
  "fal-ai/veo3.1/fast",
  "fal-ai/kling-video/v2.5-turbo/pro/text-to-video",
  "fal-ai/minimax/hailuo-02/pro/text-to-video",
  "fal-ai/minimax/hailuo-02/standard/text-to-video",
  "fal-ai/ltx-2/text-to-video",
  "fal-ai/ltx-2/text-to-video/fast",
  "fal-ai/pixverse/v5.5/text-to-video",
  "fal-ai/wan-25-preview/text-to-video",
  "fal-ai/bytedance/seedance/v1/pro/text-to-video",
  "fal-ai/bytedance/seedance/v1/lite/text-to-video",
  "kling/v2-1-pro",
  "kling/v2-1-standard",
  "kling/v2-1-master-image-to-video",
  "kling-2.6/image-to-video",
  "kling/v2-5-turbo-image-to-video-pro",
  "kling/v3-turbo-image-to-video",
  "hailuo/2-3-image-to-video-pro",
  "hailuo/2-3-image-to-video-standard",
  "hailuo/02-image-to-video-pro",
  "wan/2-7-image-to-video",
  "wan/2-6-image-to-video",
  "wan/2-5-image-to-video",
  "wan/2-2-a14b-image-to-video-turbo",
  "grok-imagine/image-to-video",
  "kling/ai-avatar-standard",
  "kling/ai-avatar-pro",
  "infinitalk/from-audio",
  "omnihuman-1-5",
  "fal-ai/veo3.1/image-to-video",
  "fal-ai/veo3.1/first-last-frame-to-video",
  "fal-ai/pixverse/v5.5/image-to-video",
  "fal-ai/vidu/q2/image-to-video/turbo",
  "topaz/video-upscale",
  "wan/2-7-videoedit",
  "wan/2-6-video-to-video",
  "wan/2-2-animate-move",
  "wan/2-2-animate-replace",
  "kling-2.6/motion-control",
  "kling-3.0/motion-control",
  "volcengine/video-to-video-lip-sync",
  "fal-ai/kling-video/o1/video-to-video/edit",
  "elevenlabs/text-to-speech-multilingual-v2",
  "elevenlabs/text-to-speech-turbo-2-5",
  "elevenlabs/sound-effect-v2",
  "elevenlabs/audio-isolation",
  "suno/v4",
  "suno/v4-5",
  "suno/v4-5-plus",
  "suno/v5",
];

describe("built-in media catalog sources", () => {
  const entries = builtin as any[];
  const notRechecked = new Set(NOT_RECHECKED.filter((id) => entries.some((e) => e.id === id)));
  const checked = entries.filter((e) => !notRechecked.has(e.id));

  test("every re-checked media entry names a page on its upstream's own host and a check date on or after the catalog's release", () => {
    expect(checked.length).toBeGreaterThanOrEqual(12);
    for (const e of checked) {
      const where = `${e.id}: `;
      expect(where + typeof e.source).toBe(where + "string");
      const host = new URL(e.source).hostname;
      // a retired model's source is the page saying it was shut down: the provider's, not the reseller's
      const upstream = e.routes[0].provider;
      expect(where + UPSTREAM_HOSTS[upstream]!.includes(host)).toBe(where + "true");
      expect(where + (e.checked >= CATALOG_RELEASED)).toBe(where + "true");
      expect(["current", "legacy", "retired"]).toContain(e.status);
    }
  });

  test("the entries not re-checked carry no source or check date (their cards say so)", () => {
    for (const id of notRechecked) {
      const e = entries.find((x) => x.id === id);
      expect(`${id} ${e.source} ${e.checked}`).toBe(`${id} undefined undefined`);
    }
  });

  test("the list of entries not re-checked names only models in the catalog", () => {
    const missing = NOT_RECHECKED.filter((id) => !entries.some((e) => e.id === id));
    expect(missing).toEqual([]);
  });

  test("gpt-image-1, which OpenAI shut down on 2026-10-23, is retired: its successor is on sale, OpenAI's own replacement is named", () => {
    const c = loadCatalog();
    expect(c.lifecycle.get("gpt-image-1")).toMatchObject({
      status: "retired",
      retires_after: "2026-10-23",
      successor: "gpt-image-2-text-to-image",
      provider_successor: "gpt-image-2.5-sunburst",
    });
    expect(c.lifecycle.get("gpt-image-2-text-to-image")!.status).not.toBe("retired");
  });

  test("models whose shutdown the provider has announced carry the date and the model to move to", () => {
    const c = loadCatalog();
    // OpenAI's deprecations page: gpt-image-1.5 shuts down on 2026-12-01; kie serves OpenAI's model, so it goes too.
    expect(c.lifecycle.get("gpt-image/1.5-text-to-image")).toMatchObject({
      status: "legacy",
      retires_after: "2026-12-01",
      successor: "gpt-image-2-text-to-image",
    });
    expect(c.lifecycle.get("gpt-image/1.5-image-to-image")).toMatchObject({
      status: "legacy",
      retires_after: "2026-12-01",
      successor: "gpt-image-2-image-to-image",
    });
  });

  test("fal's older generations are legacy in every mode, as their re-checked image-to-video siblings are", () => {
    // fal sells a newer generation of each family (Kling 3.0 Turbo, LTX-2.3, Seedance 2.0, Hailuo 2.3): an older
    // text-to-video endpoint stays on sale but is listed after the current ones, like its image-to-video sibling.
    const c = loadCatalog();
    const families: [string, string[]][] = [
      ["fal-ai/kling-video/v2.5-turbo/pro/image-to-video", ["fal-ai/kling-video/v2.5-turbo/pro/text-to-video"]],
      ["fal-ai/ltx-2/image-to-video", ["fal-ai/ltx-2/text-to-video", "fal-ai/ltx-2/text-to-video/fast"]],
      [
        "fal-ai/bytedance/seedance/v1/pro/image-to-video",
        ["fal-ai/bytedance/seedance/v1/pro/text-to-video", "fal-ai/bytedance/seedance/v1/lite/text-to-video"],
      ],
      [
        "fal-ai/minimax/hailuo-2.3/pro/text-to-video",
        ["fal-ai/minimax/hailuo-02/pro/text-to-video", "fal-ai/minimax/hailuo-02/standard/text-to-video"],
      ],
    ];
    for (const [sibling, older] of families) {
      expect(c.lifecycle.get(sibling)!.status).not.toBe("retired");
      for (const id of older) expect(`${id} ${c.lifecycle.get(id)!.status}`).toBe(`${id} legacy`);
    }
  });

  test("every media type has a re-checked current model", () => {
    const c = loadCatalog();
    const current = c.mediaList.filter(
      (m) => c.lifecycle.get(m.id)!.status === "current" && c.lifecycle.get(m.id)!.source,
    );
    expect(current.some((m) => m.type === "video")).toBe(true);
  });
});
