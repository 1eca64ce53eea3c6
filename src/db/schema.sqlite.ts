import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { defineTables } from "./tables";

const t = defineTables({
  text: (name) => text(name),
  int: (name) => integer(name, { mode: "number" }),
  table: (name, columns, extra) => sqliteTable(name, columns, extra),
  index,
  uniqueIndex,
});

export const {
  accounts,
  apiKeys,
  keyBudgets,
  idempotencyKeys,
  wallets,
  holds,
  entries,
  usageRecords,
  tasks,
  callbackDeliveries,
  resultFiles,
  users,
  sessions,
} = t;
