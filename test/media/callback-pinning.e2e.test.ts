// Callback delivery is pinned to the address the guard checked (no second DNS lookup, so no DNS rebinding). The
// sender is driven directly (deliverDue) with a stand-in resolver: the host names used here (*.test) exist in no
// real DNS, so a request that reaches a receiver can only have gone to the address the resolver gave the check,
// and the receiver sees the original Host header. https is tested with a self-signed certificate for
// callback.test, trusted only by these tests (callbackNetwork.tls.ca).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { deliverDue, type CallbackDeps, type CallbackNetwork } from "../../src/media/callbacks";
import { mediaSettingsOf } from "../../src/media/settings";
import type { Resolver } from "../../src/media/ssrf";
import { silentLogger } from "../../src/log";
import { startGateway } from "../support/gateway";
import { client, startReceiver } from "./support";

const gw = await startGateway({ LOG_LEVEL: "error" });
const hook = startReceiver(); // plain http on 127.0.0.1
const port = new URL(hook.url).port;
const { key } = await gw.account(1000, { maxConcurrentTasks: 100 }); // tasks stay queued here
const c = client(gw, key);
afterAll(async () => {
  hook.stop();
  await gw.stop();
});

/** The sender as the engine runs it, with private callbacks allowed or not and a test network. */
function sender(allowPrivate: boolean, network: CallbackNetwork): CallbackDeps {
  const settings = mediaSettingsOf(gw.ctx.config, {
    CALLBACK_ALLOW_PRIVATE: String(allowPrivate),
    CALLBACK_MAX_ATTEMPTS: "3",
  });
  const metrics = { callback() {}, creditsPosted() {}, upstreamError() {} };
  return {
    db: gw.ctx.db,
    settings,
    log: silentLogger,
    metrics,
    webhookSecret: async () => null,
    callbackNetwork: network,
  };
}

/** A task (left queued: no engine runs here) with one due delivery to `url`; returns the task id. */
async function taskWithDelivery(url: string): Promise<string> {
  const created = await c.createTask("z-image", { prompt: "x" });
  expect(created.status).toBe(200);
  const id: string = created.json.data.taskId;
  const task = await gw.ctx.db.get<any>(sql`select account_id from tasks where id = ${id}`);
  await gw.ctx.db.run(sql`insert into callback_deliveries (id, task_id, account_id, url, attempt, state, created_at, next_attempt_at)
    values (${`cbd_${id}`}, ${id}, ${task.account_id}, ${url}, ${1}, ${"pending"}, ${Date.now()}, ${0})`);
  return id;
}

async function deliverNow(deps: CallbackDeps) {
  await Promise.all(await deliverDue(deps));
}

const attempts = (taskId: string) =>
  gw.ctx.db.all<any>(
    sql`select attempt, state, status_code, error from callback_deliveries where task_id = ${taskId} order by attempt`,
  );

/** Answers the check with `first`, and anything asked later with an address nobody listens on. */
function rebindingDns(first: string[]) {
  const calls: string[] = [];
  const resolve: Resolver = async (host) => (calls.push(host), calls.length === 1 ? first : ["203.0.113.9"]);
  return { resolve, calls };
}

describe("http", () => {
  test("the request goes to the checked address with the original Host header; the name is resolved once", async () => {
    const dns = rebindingDns(["127.0.0.1"]);
    const id = await taskWithDelivery(`http://callback.test:${port}/hook?x=1`);
    await deliverNow(sender(true, { resolve: dns.resolve }));
    expect(await attempts(id)).toEqual([{ attempt: 1, state: "delivered", status_code: 200, error: null }]);
    const got = hook.received.filter((r) => r.body?.taskId === id);
    expect(got).toHaveLength(1);
    expect(got[0]!.headers.host).toBe(`callback.test:${port}`);
    expect(dns.calls).toEqual(["callback.test"]);
  });

  test("a name with several addresses: one that refuses the connection is skipped, the request is sent once", async () => {
    const id = await taskWithDelivery(`http://multi.test:${port}/hook`);
    await deliverNow(sender(true, { resolve: async () => ["127.0.0.2", "127.0.0.1"] })); // nothing listens on 127.0.0.2
    expect((await attempts(id))[0]).toMatchObject({ state: "delivered", status_code: 200 });
    expect(hook.received.filter((r) => r.body?.taskId === id)).toHaveLength(1);
  });

  test("with private callbacks refused, a name answering a private address is refused for good and not contacted", async () => {
    const id = await taskWithDelivery(`http://callback.test:${port}/hook`);
    await deliverNow(sender(false, { resolve: async () => ["127.0.0.1"] }));
    expect(await attempts(id)).toEqual([
      {
        attempt: 1,
        state: "failed",
        status_code: null,
        error: "refused: callback URL host callback.test does not resolve to a public address",
      },
    ]);
    expect(hook.received.some((r) => r.body?.taskId === id)).toBe(false);
  });

  test("a redirect is not followed (its target was never checked)", async () => {
    const other = startReceiver();
    const redirecting = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: () => new Response(null, { status: 307, headers: { location: other.url } }),
    });
    try {
      const id = await taskWithDelivery(`http://callback.test:${redirecting.port}/hook`);
      await deliverNow(sender(true, { resolve: async () => ["127.0.0.1"] }));
      expect((await attempts(id))[0]).toMatchObject({
        state: "failed",
        status_code: 307,
        error: "receiver answered 307",
      });
      expect(other.received).toHaveLength(0);
    } finally {
      redirecting.stop(true);
      other.stop();
    }
  });
});

describe("DNS timeout", () => {
  test("a resolver that never answers fails the attempt cleanly, and the next attempt is queued", async () => {
    const id = await taskWithDelivery(`http://slow.test:${port}/hook`);
    const started = Date.now();
    await deliverNow(sender(true, { resolve: () => new Promise(() => {}), dnsTimeoutMs: 100 }));
    expect(Date.now() - started).toBeLessThan(2000);
    expect(await attempts(id)).toEqual([
      {
        attempt: 1,
        state: "failed",
        status_code: null,
        error: "callback URL host slow.test did not resolve within 0.1 s",
      },
      { attempt: 2, state: "pending", status_code: null, error: null },
    ]);
  });
});

describe("https", () => {
  let dir = "";
  let cert = "";
  let tlsHook: ReturnType<typeof Bun.serve>;
  const hosts: Array<string | null> = [];
  beforeAll(() => {
    // A certificate for callback.test only (no IP address in it): it verifies only if checked against the name.
    dir = mkdtempSync(join(tmpdir(), "sy-tls-"));
    const made = Bun.spawnSync(
      [
        "openssl",
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-subj",
        "/CN=callback.test",
        "-addext",
        "subjectAltName=DNS:callback.test",
        "-days",
        "2",
        "-keyout",
        join(dir, "k.pem"),
        "-out",
        join(dir, "c.pem"),
      ],
      { stderr: "pipe" },
    );
    if (made.exitCode !== 0) throw new Error(`openssl failed: ${made.stderr.toString()}`);
    cert = readFileSync(join(dir, "c.pem"), "utf8");
    tlsHook = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      tls: { cert, key: readFileSync(join(dir, "k.pem"), "utf8") },
      fetch: (req) => (hosts.push(req.headers.get("host")), new Response("ok")),
    });
  });
  afterAll(() => {
    tlsHook?.stop(true);
    rmSync(dir, { recursive: true, force: true });
  });

  test("sent to the checked address; the certificate is checked against the name, and Host is the name", async () => {
    const dns = rebindingDns(["127.0.0.1"]);
    const id = await taskWithDelivery(`https://callback.test:${tlsHook.port}/hook`);
    await deliverNow(sender(true, { resolve: dns.resolve, tls: { ca: cert } }));
    expect(await attempts(id)).toEqual([{ attempt: 1, state: "delivered", status_code: 200, error: null }]);
    expect(hosts).toEqual([`callback.test:${tlsHook.port}`]);
    expect(dns.calls).toEqual(["callback.test"]);
  });

  test("a certificate not valid for the URL's name is refused (verification is on, and against the name)", async () => {
    hosts.length = 0;
    const id = await taskWithDelivery(`https://other.test:${tlsHook.port}/hook`);
    await deliverNow(sender(true, { resolve: async () => ["127.0.0.1"], tls: { ca: cert } }));
    const [first] = await attempts(id);
    expect(first).toMatchObject({ attempt: 1, state: "failed", status_code: null });
    expect(first.error).toContain("ERR_TLS_CERT_ALTNAME_INVALID");
    expect(hosts).toEqual([]);
  });

  test("without the test CA the self-signed certificate is not trusted", async () => {
    const id = await taskWithDelivery(`https://callback.test:${tlsHook.port}/hook`);
    await deliverNow(sender(true, { resolve: async () => ["127.0.0.1"] }));
    expect((await attempts(id))[0]).toMatchObject({ state: "failed", status_code: null });
    expect(hosts).toEqual([]);
  });
});
