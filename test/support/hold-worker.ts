// A Bun Worker that opens its own connection to a SQLite file and takes holds as fast as it can, so the ledger's
// no-overspend guarantee is tested across real concurrent writers, not just one event loop.
import { openDatabase } from "../../src/db/client";
import { Ledger } from "../../src/ledger/service";

declare const self: Worker;
self.onmessage = async (e: MessageEvent<{ url: string; accountId: string; count: number; amount: number }>) => {
  const { url, accountId, count, amount } = e.data;
  const db = await openDatabase(url);
  const ledger = new Ledger(db);
  let ok = 0;
  for (let i = 0; i < count; i++) {
    try {
      const h = await ledger.hold(accountId, amount, "llm", null, 60_000);
      ok++;
      if (i % 3 === 0) await ledger.post(h.id, amount / 2);
    } catch (err: any) {
      if (err?.code !== "insufficient_credits") throw err;
    }
  }
  await db.close();
  self.postMessage({ ok });
};
