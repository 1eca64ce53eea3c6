// The layers, read from the imports of src/ (import-graph.ts), so that they stay as docs/architecture.md draws them:
// the two engines (llm, media) do not import each other, the ledger imports neither (they use it), and none of the
// three imports pages, dashboard or discovery; the catalog hands data and runs no media code (src/catalog-loader.ts
// joins the two); the database's migrations sit below its client.
import { expect, test } from "bun:test";
import { folderOf, importGraph, type ImportEdge } from "./import-graph";

const graph = importGraph();
const edge = (e: ImportEdge) => `${e.from} -> ${e.to}${e.typeOnly ? " (types)" : ""}`;
const crossing = (from: string[], to: string[], opts: { codeOnly?: boolean } = {}) =>
  graph
    .filter((e) => from.includes(folderOf(e.from)) && to.includes(folderOf(e.to)) && !(opts.codeOnly && e.typeOnly))
    .map(edge);

test("the import graph is read (a broken reader would pass every rule)", () => {
  expect(graph.length).toBeGreaterThan(300);
  expect(graph.map(edge)).toContain("app.ts -> media/routes.ts");
  expect(graph.map(edge)).toContain("catalog/public.ts -> media/model.ts (types)");
  expect(graph.map(edge)).toContain("catalog-loader.ts -> media/model.ts");
});

test("the LLM and media engines do not import each other", () => {
  expect(crossing(["llm"], ["media"])).toEqual([]);
  expect(crossing(["media"], ["llm"])).toEqual([]);
});

test("the ledger imports neither engine", () => {
  expect(crossing(["ledger"], ["llm", "media"])).toEqual([]);
});

test("the engines and the ledger import no page, dashboard or discovery module", () => {
  expect(crossing(["llm", "media", "ledger"], ["pages", "dashboard", "discovery"])).toEqual([]);
});

test("the catalog runs no code of the media module (it may name its types)", () => {
  expect(crossing(["catalog"], ["media"], { codeOnly: true })).toEqual([]);
});

test("the database modules import each other in one direction (migrations below the client)", () => {
  const db = graph.filter((e) => e.from.startsWith("db/") && e.to.startsWith("db/"));
  const next = new Map<string, string[]>();
  for (const e of db) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const reaches = (from: string, target: string, seen = new Set<string>()): boolean =>
    (next.get(from) ?? []).some((to) => to === target || (!seen.has(to) && (seen.add(to), reaches(to, target, seen))));
  expect(db.filter((e) => reaches(e.to, e.from)).map(edge)).toEqual([]);
  expect(db.map(edge)).toContain("db/client.ts -> db/migrate.ts");
});
