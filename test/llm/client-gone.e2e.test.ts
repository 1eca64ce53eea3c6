// A client that leaves before its request went upstream (here: while its hold waits for the ledger's commit, as a
// wallet's first call after an idle spell does) is charged nothing, and nothing reaches the upstream.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { expectVoided, startEnv, stopEnv, type Env } from "./support";

let e: Env;
beforeAll(async () => {
  e = await startEnv();
});
afterAll(() => stopEnv(e));

test("the client leaves while its hold waits for a commit: released, nothing charged, nothing sent upstream", async () => {
  const { accountId, key } = await e.gw.account(100);
  const db = e.gw.ctx.db;
  const tx = db.tx;
  let slowed = 0;
  // Every commit takes 150 ms, as a distant Postgres might under load; the call's hold waits for one.
  db.tx = async (body) => {
    slowed++;
    await Bun.sleep(150);
    return tx(body);
  };
  const ac = new AbortController();
  const upstreamBefore = e.fake.requests.length;
  try {
    const sent = fetch(e.gw.url + "/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: "gpt-5.2",
        max_completion_tokens: 100,
        messages: [{ role: "user", content: "Hi" }],
      }),
      signal: ac.signal,
    }).catch(() => "left");
    await Bun.sleep(50);
    expect(slowed).toBeGreaterThan(0); // the hold is waiting on the commit
    ac.abort();
    expect(await sent).toBe("left");
    await Bun.sleep(300);
  } finally {
    db.tx = tx;
  }
  expect(e.fake.requests.length).toBe(upstreamBefore);
  await expectVoided(e.gw, accountId, 100);
});
