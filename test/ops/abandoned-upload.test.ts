// A client that closes its connection before its request body has arrived is a client abort: 499 in the access log
// and in the request metrics, not a 500 logged as `unhandled error` (anyone could raise the gateway's error rate,
// without a key, through the public estimate endpoint).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect } from "node:net";
import { createLogger } from "../../src/log";
import { ADMIN_TOKEN, startGateway, type TestGateway } from "../support/gateway";

const lines: Array<Record<string, any>> = [];
let gw: TestGateway;
let key: string;
beforeAll(async () => {
  gw = await startGateway(
    { OPENAI_API_KEY: "sk-x", OPENAI_BASE_URL: "http://127.0.0.1:9/v1" },
    createLogger("info", (l) => lines.push(JSON.parse(l))),
  );
  ({ key } = await gw.account(100));
});
const credentials = {
  none: () => "",
  admin: () => `authorization: Bearer ${ADMIN_TOKEN}\r\n`,
  key: () => `authorization: Bearer ${key}\r\n`,
};
afterAll(() => gw.stop());

/** Sends the headers and part of the body (stated whole, or chunked), then closes the connection. */
function abandon(path: string, framing: "content-length" | "chunked", headers = ""): Promise<void> {
  const port = Number(new URL(gw.url).port);
  const head = `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n${headers}`;
  const unfinished =
    framing === "chunked"
      ? `transfer-encoding: chunked\r\n\r\nd\r\n{"model":"goo\r\n`
      : `content-length: 5000\r\n\r\n{"model":"goo`;
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(head + unfinished));
    socket.on("error", reject);
    socket.on("close", () => resolve());
    // Closed once the gateway has the request in hand (reading its body), not before it has seen it.
    void until(() => gw.app.server!.pendingRequests > 0).then(() => socket.destroy());
  });
}

const accessLines = () => lines.filter((l) => l.msg === "request");

async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await Bun.sleep(5);
}

async function requestsTotal(route: string): Promise<Record<string, number>> {
  const text = await (await fetch(gw.url + "/metrics")).text();
  const byStatus: Record<string, number> = {};
  for (const m of text.matchAll(
    /^switchyard_http_requests_total\{method="POST",route="([^"]+)",status="(\d+)"\} (\d+)$/gm,
  ))
    if (m[1] === route) byStatus[m[2]!] = Number(m[3]);
  return byStatus;
}

test.each([
  ["/v1/credits/estimate", "content-length", "none"],
  ["/v1/credits/estimate", "chunked", "none"],
  ["/admin/v1/accounts", "content-length", "admin"],
  ["/api/v1/jobs/createTask", "chunked", "key"],
  ["/v1/chat/completions", "content-length", "key"],
] as const)(
  "an upload abandoned mid-body on %s (%s): 499 in the access log and the metrics, no error logged",
  async (route, framing, who) => {
    const before = await requestsTotal(route);
    const logged = accessLines().length;
    await abandon(route, framing, credentials[who]());
    const posted = () =>
      accessLines()
        .slice(logged)
        .filter((l) => l.method === "POST");
    await until(() => posted().length > 0);

    expect(posted()).toEqual([expect.objectContaining({ route, status: 499 })]);
    expect(lines.filter((l) => l.level === "error" || l.level === "warn")).toEqual([]);
    const after = await requestsTotal(route);
    expect((after["499"] ?? 0) - (before["499"] ?? 0)).toBe(1);
    expect(after["500"] ?? 0).toBe(before["500"] ?? 0);
  },
);
