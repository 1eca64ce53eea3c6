import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadCatalog } from "../../src/catalog-loader";
import { firstCalls } from "../../src/discovery/first-calls";

// /docs's "first call" per protocol must name a model that answers: when an operator retires the catalog's first
// model of a protocol (CATALOG_PATH), the first call moves to the next one on sale instead of showing a 410.

function catalogFile(entries: unknown[]): string {
  const path = join(mkdtempSync(join(tmpdir(), "sy-first-")), "catalog.json");
  writeFileSync(path, JSON.stringify(entries));
  return path;
}

describe("/docs first calls", () => {
  test("skip retired models: each protocol's first call names a model on sale", () => {
    const builtIn = loadCatalog();
    const before = firstCalls(builtIn, "https://gw.example.com");
    // (a model another names as its successor cannot be retired, so those stay)
    const successors = new Set([...builtIn.lifecycle.values()].map((l) => l.successor));
    const retired = before.map((c) => c.model).filter((id) => !successors.has(id));
    expect(retired.length).toBeGreaterThanOrEqual(3);
    const catalog = loadCatalog(
      catalogFile(retired.map((id) => ({ id, status: "retired", successor: successorFor(builtIn, id, retired) }))),
    );
    const after = firstCalls(catalog, "https://gw.example.com");
    expect(after.map((c) => c.protocol)).toEqual(before.map((c) => c.protocol));
    for (const id of retired) expect(after.map((c) => c.model)).not.toContain(id);
    for (const c of after) {
      expect(catalog.lifecycle.get(c.model)?.status).not.toBe("retired");
      expect(c.curl).toContain(JSON.stringify(c.model));
    }
  });
});

/** Another model of the same type and endpoint, not retired: what a successor must be. */
function successorFor(catalog: ReturnType<typeof loadCatalog>, id: string, exclude: string[]): string {
  const all = [...catalog.llmList, ...catalog.mediaList] as Array<{ id: string; type?: string; endpoint?: string }>;
  const self = all.find((m) => m.id === id)!;
  return all.find(
    (m) =>
      m.id !== id &&
      !exclude.includes(m.id) &&
      m.type === self.type &&
      m.endpoint === self.endpoint &&
      catalog.lifecycle.get(m.id)?.status !== "retired",
  )!.id;
}
