import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway";

// A media card tells how long result files are kept: the gateway's RESULT_RETENTION_DAYS, not a fixed figure.

let gw: TestGateway;
beforeAll(async () => (gw = await startGateway({ RESULT_RETENTION_DAYS: "3" })));
afterAll(() => gw.stop());

test("a media card states the configured result retention", async () => {
  const page = await (await fetch(`${gw.url}/models/google/nano-banana`)).text();
  expect(page).toContain("Result files are kept for 3 days");
  expect(page).not.toContain("14 days");
});
