import { afterAll, beforeAll, expect, test } from "bun:test";
import { client, startMediaGateway, startReceiver, waitFor, type MediaGateway } from "./support";

// The media engine runs in Bun Workers, whose prom-client registry is not the one /metrics serves: its events are
// posted to the main thread. This pins that the numbers an operator sees move when a worker settles and calls back.
let gw: MediaGateway;
let receiver: ReturnType<typeof startReceiver>;
beforeAll(async () => {
  gw = await startMediaGateway();
  receiver = startReceiver();
});
afterAll(async () => {
  receiver.stop();
  await gw.stop();
});

const sample = (text: string, name: string, labels: string) => {
  const line = text.split("\n").find((l) => l.startsWith(`${name}{${labels}}`));
  return line ? Number(line.split(" ").pop()) : 0;
};

test("a task finished in a worker moves credits-settled and callback counters on /metrics", async () => {
  expect(gw.media.mode).toBe("workers");
  const before = await (await fetch(gw.url + "/metrics")).text();
  const { key } = await gw.account(100);
  const c = client(gw, key);
  const created = await c.createTask("google/nano-banana", { prompt: "a lighthouse" }, { callBackUrl: receiver.url });
  expect(created.status).toBe(200);
  const record = await c.waitRecord(created.json.data.taskId);
  expect(record.state).toBe("success");
  await waitFor(() => receiver.received.length > 0, 10_000, "callback");
  const after = await waitFor(
    async () => {
      const t = await (await fetch(gw.url + "/metrics")).text();
      return sample(t, "switchyard_callback_deliveries_total", 'outcome="delivered"') > 0 ? t : null;
    },
    5_000,
    "callback counter",
  );
  const settled =
    sample(after, "switchyard_credits_settled_micro_credits_total", 'kind="task"') -
    sample(before, "switchyard_credits_settled_micro_credits_total", 'kind="task"');
  expect(settled).toBe(record.creditsConsumed * 1_000_000);
});
