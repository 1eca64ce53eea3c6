import { bigint, index, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { defineTables } from "./tables";

const t = defineTables({
  text: (name) => text(name),
  int: (name) => bigint(name, { mode: "number" }),
  table: (name, columns, extra) => pgTable(name, columns, extra),
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
