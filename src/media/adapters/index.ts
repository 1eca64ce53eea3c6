// The adapter for each provider named in the catalog's routes.
import type { MediaProvider } from "../model";
import { falAdapter } from "./fal";
import { kieSunoAdapter } from "./kie-suno";
import { kieAdapter } from "./kie";
import { openaiImagesAdapter } from "./openai-images";
import { replicateAdapter } from "./replicate";
import type { UrlPolicy } from "../upstream-fetch";
import type { Adapter, Upstreams } from "./types";
import { veoAdapter } from "./veo";

export type { Adapter } from "./types";

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
