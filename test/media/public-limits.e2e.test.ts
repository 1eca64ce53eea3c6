// The public endpoints that work without a key are limited per client address (PUBLIC_RATE_LIMIT), each on its own:
// without that anyone could keep the gateway busy for free. Invalid bodies count too (the limit comes first).
import { afterAll, describe, expect, test } from "bun:test";
import { clearOfWindowEdge } from "../support/rate-windows";
import { startMediaGateway } from "./support";
import { errorOf } from "../support/json";

const gw = await startMediaGateway({ MEDIA_WORKERS: "0", PUBLIC_RATE_LIMIT: "3/60s", TRUSTED_PROXY_HOPS: "1" });
afterAll(() => gw.stop());

const post = (path: string, body: unknown, from: string) =>
  fetch(gw.url + path, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": from },
    body: JSON.stringify(body),
  });
const ask = { model: "kling-3.0/video", duration: 5 };

describe("limits by address on the public endpoints", () => {
  test("POST /v1/credits/estimate: the 4th request in the window from one address is a 429 in the OpenAI shape", async () => {
    await clearOfWindowEdge(60, 2_000); // PUBLIC_RATE_LIMIT is 3/60s: every request below in one window
    const statuses = [];
    for (const body of [ask, { model: "no-such-model" }, ask])
      statuses.push((await post("/v1/credits/estimate", body, "203.0.113.7")).status);
    expect(statuses).toEqual([200, 422, 200]);
    const refused = await post("/v1/credits/estimate", ask, "203.0.113.7");
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await errorOf(refused)).error).toMatchObject({ code: "rate_limit_exceeded", type: "rate_limit_error" });
    // Another address (one trusted proxy: the right-most X-Forwarded-For entry) has its own window.
    expect((await post("/v1/credits/estimate", ask, "198.51.100.1, 203.0.113.8")).status).toBe(200);
    expect((await post("/v1/credits/estimate", ask, "198.51.100.1, 203.0.113.7")).status).toBe(429);
  });

  test("POST /v1/media/upstream-events: its own window, refusals do not touch tasks", async () => {
    const notice = { data: { task_id: "not-a-task" } };
    await clearOfWindowEdge(60, 2_000);
    for (let i = 0; i < 3; i++)
      expect((await post("/v1/media/upstream-events/kie", notice, "203.0.113.7")).status).toBe(200);
    expect((await post("/v1/media/upstream-events/kie", notice, "203.0.113.7")).status).toBe(429);
  });

  test("an IPv6 client counts by its /64: rotating addresses inside it does not reset the window", async () => {
    await clearOfWindowEdge(60, 2_000);
    for (let i = 1; i <= 3; i++)
      expect((await post("/v1/credits/estimate", ask, `2001:db8:5:6::${i}`)).status).toBe(200);
    expect((await post("/v1/credits/estimate", ask, "2001:db8:5:6:abcd::4")).status).toBe(429);
    expect((await post("/v1/credits/estimate", ask, "2001:db8:5:7::1")).status).toBe(200);
  });
});
