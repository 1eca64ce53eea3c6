import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway";
import { mediaEntries } from "./catalog-data";
import { cardExamples } from "./html";

// Acceptance: every media card's example requests work as printed. The requests are read from the rendered card
// (its JSON block holds the objects the curl text is made from), sent with a test key against fake upstreams:
// the native call and the alias call each create a task, and the estimate call answers the price the card states.

const engineReady = await Bun.file(new URL("../../src/media/routes.ts", import.meta.url)).exists();
const fakesPath = new URL("../fakes/media/index.ts", import.meta.url);
const fakesReady = await Bun.file(fakesPath).exists();
const reason = !engineReady
  ? "the media engine (src/media/routes.ts) has not landed yet"
  : !fakesReady
    ? "the media fake upstreams (test/fakes/media/index.ts) have not landed yet"
    : !mediaEntries.length
      ? "no media models in the catalog"
      : "";
if (reason) console.warn(`SKIPPED: card example requests against the task API: ${reason}`);

let gw: TestGateway;
let fakes: { env: Record<string, string>; stop(): Promise<void> | void } | undefined;
beforeAll(async () => {
  if (reason) return;
  fakes = (await import(fakesPath.href)).startFakeMediaUpstreams();
  // Generous limits: this test creates two tasks and asks one estimate per model, one after another.
  gw = await startGateway({
    ...fakes!.env,
    DEFAULT_RATE_LIMIT: "100000/10s",
    DEFAULT_MAX_CONCURRENT_TASKS: "100000",
    PUBLIC_RATE_LIMIT: "100000/10s",
  });
});
afterAll(async () => {
  await gw?.stop();
  await fakes?.stop();
});

/** The card's request with the key placeholder replaced by a real key (what a reader's shell does with $SWITCHYARD_KEY). */
function send(req: any, key: string) {
  const headers = Object.fromEntries(
    Object.entries(req.headers as Record<string, string>).map(([k, v]) => [k, v.replace("$SWITCHYARD_KEY", key)]),
  );
  return fetch(gw.url + req.path, { method: req.method, headers, body: JSON.stringify(req.body) });
}

test.skipIf(!!reason)(
  "each media card's example requests create a task; its estimate call returns the stated price",
  async () => {
    const { key } = await gw.account(10_000_000);
    const failures: string[] = [];
    for (const e of mediaEntries) {
      const page = await (await fetch(`${gw.url}/models/${e.id.split("/").map(encodeURIComponent).join("/")}`)).text();
      const ex = await cardExamples(page);

      const est = await send(ex.estimate, key);
      const estBody: any = await est.json();
      const credits = estBody.credits ?? estBody.estimated_credits ?? estBody.estimate?.credits;
      if (est.status !== 200 || credits !== ex.estimated_credits)
        failures.push(`${e.id} estimate: ${est.status} ${JSON.stringify(estBody)} (card says ${ex.estimated_credits})`);

      const native = await send(ex.native, key);
      const nb: any = await native.json();
      if (nb.code !== 200 || typeof nb.data?.taskId !== "string")
        failures.push(`${e.id} createTask: ${native.status} ${JSON.stringify(nb)}`);

      const alias = await send(ex.alias, key);
      const ab: any = await alias.json();
      if (alias.status >= 300 || typeof ab.task_id !== "string")
        failures.push(`${e.id} ${ex.alias.path}: ${alias.status} ${JSON.stringify(ab)}`);
    }
    expect(failures).toEqual([]);
  },
  300_000,
);
