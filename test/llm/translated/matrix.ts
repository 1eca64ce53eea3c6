// Every LLM of the catalog called on one endpoint with that endpoint's official SDK(s), against the fake upstream:
// a plain call, a streamed one, and two tool round trips (call → tool result → answer; the call JSON and the
// answer streamed, then the other way round). Native and translated alike: the SDK parses every answer, the tool
// call's id comes back to the upstream unchanged, and each call is charged the native formula on the usage the
// upstream stated, read from the ledger.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { ledgerOf, MICROS, startEnv, stopEnv, type Env } from "../support";
import { chargeOf, clientsFor, LLMS, NATIVE_CALL_ID, nativeOf, STATED, type Endpoint } from "./clients";

export function matrixFor(endpoint: Endpoint) {
  let e: Env;
  beforeAll(async () => {
    e = await startEnv();
  });
  afterAll(() => stopEnv(e));

  for (const m of LLMS) {
    const native = nativeOf(m);
    const how = native === endpoint ? "passed through" : `translated to ${native}`;
    test(`${m.id} on ${endpoint} (${how}): plain, streamed, tool round trips; parsed, ids kept, charged the native formula`, async () => {
      const { accountId, key } = await e.gw.account(1000);
      const expected: number[] = [];
      const stated = STATED[native];
      for (const client of clientsFor(endpoint, e.gw.url, key)) {
        e.fake.enqueue("ok");
        const plain = await client.call(m.id, { stream: false });
        expect(plain.text.length).toBeGreaterThan(0);
        expected.push(chargeOf(m, stated.ok.json));

        e.fake.enqueue("ok");
        const streamed = await client.call(m.id, { stream: true });
        expect(streamed.text.length).toBeGreaterThan(0);
        expected.push(chargeOf(m, stated.ok.stream));

        for (const firstStreamed of [false, true]) {
          const first = client.firstTurn();
          e.fake.enqueue("tool");
          const call = await client.call(m.id, { stream: firstStreamed, tools: true, history: first });
          expect(call.toolCall?.name).toBe("get_weather");
          expect(typeof call.toolCall!.arguments).toBe("object");
          expected.push(chargeOf(m, firstStreamed ? stated.tool.stream : stated.tool.json));

          e.fake.enqueue("ok");
          await client.call(m.id, {
            stream: !firstStreamed,
            tools: true,
            history: client.withResult(first, call, "Sunny, 21 degrees"),
          });
          expected.push(chargeOf(m, firstStreamed ? stated.ok.json : stated.ok.stream));
          const up = e.fake.requests.at(-1)!.body;
          expect(up).toContain(NATIVE_CALL_ID[native][firstStreamed ? "stream" : "json"]);
          expect(up).toContain("Sunny, 21 degrees");
        }
      }
      const { calls, wallet } = await ledgerOf(e.gw, accountId);
      expect(calls.map((c) => c.status)).toEqual(expected.map(() => "ok"));
      expect(calls.map((c) => c.cost)).toEqual(expected);
      expect(Number(wallet.balance)).toBe(1000 * MICROS - expected.reduce((a, b) => a + b, 0));
      expect(Number(wallet.held)).toBe(0);
    });
  }
}
