// Codex CLI's own tool kinds on a translated model: its `namespace` tools (sub-agents, MCP servers) reach the model
// as their members and a call goes back under its namespace; its hosted `web_search` (offered in every request) has
// no equivalent there: left out and named in the answer's x-switchyard-dropped-tools header, a 400 when forced.
import { afterAll, beforeAll, expect, test } from "bun:test";
import OpenAI from "openai";
import { expectVoided, startEnv, stopEnv, type Env } from "../support";

let e: Env;
beforeAll(async () => {
  e = await startEnv();
});
afterAll(() => stopEnv(e));
const openai = (key: string) => new OpenAI({ apiKey: key, baseURL: e.gw.url + "/v1", maxRetries: 0 });
const rejection = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (x) => x,
  );

const agents = {
  type: "namespace",
  name: "multi_agent_v1",
  description: "Tools for spawning and managing sub-agents.",
  tools: [
    {
      type: "function",
      name: "spawn_agent",
      description: "Spawn a sub-agent.",
      strict: false,
      parameters: { type: "object", properties: { message: { type: "string" } }, required: ["message"] },
    },
  ],
};

test("web_search on Claude: left out of the upstream request and named in x-switchyard-dropped-tools (JSON and streamed)", async () => {
  const { key } = await e.gw.account(100);
  e.fake.setScenario({ kind: "script", steps: [{ text: "Hi." }, { text: "Hi." }] });
  for (const stream of [false, true]) {
    const res = await fetch(e.gw.url + "/v1/responses", {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: "claude-sonnet-4-5",
        input: "hi",
        max_output_tokens: 500,
        stream,
        tools: [
          { type: "web_search", external_web_access: false },
          { ...agents, tools: [...agents.tools, { type: "local_shell" }] },
        ],
      }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-switchyard-dropped-tools")).toBe("web_search, local_shell");
    await res.text();
    const sent = JSON.parse(e.fake.requests.at(-1)!.body);
    expect((sent.tools ?? []).map((t: any) => t.name)).toEqual(["multi_agent_v1__spawn_agent"]);
  }
});

test("a tool_choice forcing a hosted tool on Claude: a 400 naming it; nothing held or sent", async () => {
  const { accountId, key } = await e.gw.account(100);
  const before = e.fake.requests.length;
  const err: any = await rejection(
    openai(key).responses.create({
      model: "claude-sonnet-4-5",
      input: "hi",
      tools: [{ type: "web_search" } as any],
      tool_choice: { type: "web_search" } as any,
    }),
  );
  expect(err.status).toBe(400);
  expect(err.error).toMatchObject({ code: "unsupported_for_model", param: "tool_choice" });
  expect(err.error.message).toContain('"web_search"');
  expect(e.fake.requests.length).toBe(before);
  await expectVoided(e.gw, accountId, 100, 0);
});

test("a tool without a type: a 400 naming it", async () => {
  const { key } = await e.gw.account(100);
  const err: any = await rejection(
    openai(key).responses.create({ model: "claude-sonnet-4-5", input: "hi", tools: [{ name: "x" } as any] }),
  );
  expect(err.status).toBe(400);
  expect(err.error).toMatchObject({ code: "unsupported_for_model", param: "tools[0].type" });
});

test("a namespace member on Claude and Gemini: offered to the model by its joined name, called back under its namespace (JSON and streamed)", async () => {
  const { key } = await e.gw.account(100);
  const client = openai(key);
  e.fake.setScenario({
    kind: "script",
    steps: [{ call: { name: "multi_agent_v1__spawn_agent", input: { message: "go" } } }, { text: "Done." }],
  });
  for (const model of ["claude-sonnet-4-5", "gemini-2.5-flash"]) {
    for (const stream of [false, true]) {
      const req = { model, max_output_tokens: 500, input: "Spawn a helper.", tools: [agents as any] };
      const r: any = stream ? await client.responses.stream(req).finalResponse() : await client.responses.create(req);
      const call = r.output.find((i: any) => i.type === "function_call");
      expect(call, `${model} ${stream}`).toMatchObject({
        namespace: "multi_agent_v1",
        name: "spawn_agent",
        arguments: '{"message":"go"}',
      });
      const sent = JSON.parse(e.fake.requests.at(-1)!.body);
      const names = (sent.tools ?? []).map((t: any) => t.name ?? t.function?.name);
      expect(names).toEqual(["multi_agent_v1__spawn_agent"]);

      // Codex sends the call back in its history as it got it: read under the joined name again.
      await client.responses.create({
        ...req,
        input: [
          { role: "user", content: "Spawn a helper." },
          call,
          { type: "function_call_output", call_id: call.call_id, output: "spawned" },
        ],
      });
      const again = e.fake.requests.at(-1)!.body;
      expect(again).toContain("multi_agent_v1__spawn_agent");
    }
  }
});
