// The adapter for each provider named in the catalog's routes.
import type { MediaProvider } from "../model.ts";
import { falAdapter } from "./fal.ts";
import { kieSunoAdapter } from "./kie-suno.ts";
import { kieAdapter } from "./kie.ts";
import { openaiImagesAdapter } from "./openai-images.ts";
import { replicateAdapter } from "./replicate.ts";
import type { UrlPolicy } from "../upstream-fetch.ts";
import type { Adapter, Upstreams } from "./types.ts";
import { veoAdapter } from "./veo.ts";

export type { Adapter } from "./types.ts";

/** `urls`: how URLs an upstream hands over are fetched (fal's status and response URLs). */
export function createAdapters(up: Upstreams, urls: UrlPolicy): Record<MediaProvider, Adapter> {
  return {
    kie: kieAdapter(up),
    "kie-suno": kieSunoAdapter(up),
    fal: falAdapter(up, urls),
    replicate: replicateAdapter(up),
    "openai-images": openaiImagesAdapter(up),
    veo: veoAdapter(up),
  };
}
