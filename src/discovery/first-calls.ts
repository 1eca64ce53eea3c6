import type { Catalog } from "../catalog/service";
import { curlText, llmExample, mediaExamples } from "../pages/model-card-examples";

// The "first call" section of /docs: one working request per protocol (curl and an SDK), made by the same builders
// as the model cards' examples (pages/model-card-examples.ts), with the first catalog model of each protocol that is
// still served (a retired one would answer 410).

export interface FirstCall {
  protocol: string;
  model: string;
  curl: string;
  sdk?: { package: string; code: string };
}

const PROTOCOLS = [
  { endpoint: "/v1/messages", name: "Anthropic Messages" },
  { endpoint: "/v1/responses", name: "OpenAI Responses" },
  { endpoint: "/v1/chat/completions", name: "OpenAI Chat Completions" },
  { endpoint: "/v1/embeddings", name: "Embeddings" },
] as const;

export function firstCalls(catalog: Catalog, baseUrl: string): FirstCall[] {
  const calls: FirstCall[] = [];
  const served = (id: string) => catalog.lifecycle.get(id)?.status !== "retired";
  for (const p of PROTOCOLS) {
    const m = catalog.llmList.find((l) => l.endpoint === p.endpoint && served(l.id));
    if (!m) continue;
    const ex = llmExample(m, baseUrl);
    calls.push({ protocol: p.name, model: m.id, curl: curlText(ex.request, baseUrl), sdk: ex.sdk });
  }
  const media = catalog.mediaList.find((m) => served(m.id));
  if (media) {
    const ex = mediaExamples(media);
    calls.push({
      protocol: "Media tasks",
      model: media.id,
      curl:
        curlText(ex.native, baseUrl) +
        `\n\n# then poll it\ncurl -s "${baseUrl}/api/v1/jobs/recordInfo?taskId=<taskId>" -H "authorization: Bearer $SWITCHYARD_KEY"`,
    });
  }
  return calls;
}
