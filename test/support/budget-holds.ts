// A separate process taking key-budget holds on one key all at once (KeyBudgets, as the LLM path does), settling
// every other one at half its amount; prints what it got as JSON. Two of these against one database test that a
// budget is never overspent across processes.
import { KeyBudgets } from "../../src/accounts/key-budgets";
import { openDatabase } from "../../src/db/client";

const [url, keyId, count, amount, cap] = process.argv.slice(2);
const db = await openDatabase(url!);
const budgets = new KeyBudgets(db, (e) => console.error(String(e)));
const key = { keyId: keyId!, budget: { day: Number(cap) } };
let held = 0;
let charged = 0;
let refused = 0;
await Promise.all(
  Array.from({ length: Number(count) }, async (_, i) => {
    try {
      const h = (await budgets.hold(key, Number(amount)))!;
      held++;
      const charge = i % 2 === 0 ? Number(amount) / 2 : Number(amount);
      budgets.post(h, charge);
      charged += charge;
    } catch (e: any) {
      if (e?.code !== "key_budget_exceeded") throw e;
      refused++;
    }
  }),
);
await budgets.committedFor(keyId!);
await db.close();
console.log(JSON.stringify({ held, charged, refused }));
