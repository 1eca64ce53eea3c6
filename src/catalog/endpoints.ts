// Which endpoint creates a task of each media type (the OpenAI-style alias doors, media/routes.ts), beside the
// catalog's per-model `endpoint` for LLMs: read by whoever points a caller to the right door (the LLM proxy, the
// media routes, /openapi.json), none of which needs the media engine for it.

export const ALIAS_PATH = {
  image: "/v1/images/generations",
  video: "/v1/videos",
  audio: "/v1/music/generations",
} as const;
