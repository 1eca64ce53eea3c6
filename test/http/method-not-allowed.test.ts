// A path the gateway serves, called with a method it does not take: 405 with `allow`, in the caller's protocol
// shape, not a 404 saying the route does not exist. A path it does not serve stays a 404.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway";
import { errorOf } from "../support/json";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(() => gw.stop());

test("GET on an LLM endpoint: 405, allow: POST, in that protocol's error shape", async () => {
  const chat = await fetch(gw.url + "/v1/chat/completions");
  expect(chat.status).toBe(405);
  expect(chat.headers.get("allow")).toBe("POST");
  expect((await errorOf(chat)).error).toMatchObject({ code: "method_not_allowed" });
  const messages = await fetch(gw.url + "/v1/messages", { method: "PUT", body: "{}" });
  expect(messages.status).toBe(405);
  expect(await messages.json()).toMatchObject({
    type: "error",
    error: { type: "invalid_request_error", code: "method_not_allowed" },
  });
});

test("the native task API answers in its envelope; a GET route called with POST names GET", async () => {
  const task = await fetch(gw.url + "/api/v1/jobs/createTask");
  expect(task.status).toBe(405);
  expect(await task.json()).toMatchObject({ code: 405, data: null });
  const models = await fetch(gw.url + "/v1/models", { method: "POST", body: "{}" });
  expect([models.status, models.headers.get("allow")]).toEqual([405, "GET"]);
});

test("HEAD on a GET route and an unknown path are not 405", async () => {
  expect((await fetch(gw.url + "/v1/models", { method: "HEAD" })).status).not.toBe(405);
  const unknown = await fetch(gw.url + "/v1/nope");
  expect(unknown.status).toBe(404);
  expect((await errorOf(unknown)).error.code).toBe("not_found");
});
