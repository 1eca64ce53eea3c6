// /docs's first calls run as a reader would run them: each curl through bash and each SDK snippet through bun, with
// SWITCHYARD_KEY the key of an account holding the README quickstart's 1,000 credits, against a gateway on fake
// upstreams. Every one must succeed: an example that answers 402 teaches nothing but distrust.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeLlmUpstream } from "../fakes/llm-upstream";
import { providerEnv } from "../llm/support";
import { startMediaGateway, type MediaGateway } from "../media/support";

let gw: MediaGateway;
let fake: ReturnType<typeof startFakeLlmUpstream>;
let key: string;
let blocks: string[];
const DOCS_BASE = "https://gateway.example";

beforeAll(async () => {
  fake = startFakeLlmUpstream();
  const { CATALOG_PATH: _, ...env } = providerEnv(fake.url); // the built-in catalog: the models /docs names
  gw = await startMediaGateway({ ...env, PUBLIC_BASE_URL: DOCS_BASE }, { autostart: false });
  ({ key } = await gw.account(1000));
  const html = await (await fetch(gw.url + "/docs")).text();
  const text = (s: string) =>
    s
      .replace(/<[^>]+>/g, "")
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&lt;/g, "<")
      .replace(/&gt;/g, ">")
      .replace(/&amp;/g, "&")
      .replaceAll(DOCS_BASE, gw.url); // rendered with the configured base; the test gateway listens elsewhere
  const first = html.slice(html.indexOf('id="first-call"'));
  blocks = [...first.matchAll(/<pre[^>]*>([\s\S]*?)<\/pre>/g)]
    .map((m) => text(m[1]!))
    .filter((b) => b.startsWith("curl") || b.startsWith("import"));
});
afterAll(async () => {
  await gw?.stop();
  await fake?.stop();
});

async function run(cmd: string[]): Promise<{ out: string; code: number }> {
  const p = Bun.spawn(cmd, { env: { ...process.env, SWITCHYARD_KEY: key }, stdout: "pipe", stderr: "pipe" });
  const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
  return { out: out + err, code: await p.exited };
}

describe("/docs first calls, run as written", () => {
  test("there is a curl call and an SDK call per LLM protocol, and a task", () => {
    expect(blocks.filter((b) => b.startsWith("curl")).length).toBeGreaterThanOrEqual(5);
    expect(blocks.filter((b) => b.startsWith("import")).length).toBeGreaterThanOrEqual(4);
  });

  test("every curl call answers 200", async () => {
    const failed: string[] = [];
    for (const b of blocks.filter((b) => b.startsWith("curl"))) {
      const call = b.split("\n\n# then poll")[0]!; // the poll needs the task id the first call returned
      const r = await run(["bash", "-c", `${call} -o /dev/stderr -w '%{http_code}'`]);
      if (!r.out.endsWith("200")) failed.push(`${call.split("\n")[0]}: ${r.out.slice(-300)}`);
    }
    expect(failed).toEqual([]);
  }, 60_000);

  test("every SDK call runs to its end", async () => {
    const failed: string[] = [];
    for (const [i, b] of blocks.filter((b) => b.startsWith("import")).entries()) {
      const file = join(import.meta.dir, `.docs-example-${i}.mjs`); // here, so that the SDKs resolve from node_modules
      writeFileSync(file, b);
      try {
        const r = await run(["bun", file]);
        if (r.code !== 0) failed.push(`${b.split("\n")[0]}: ${r.out.slice(-300)}`);
      } finally {
        rmSync(file, { force: true });
      }
    }
    expect(failed).toEqual([]);
  }, 60_000);
});
