// The import graph of src/, read from the source text: each module's imports resolved to paths under src/, with
// whether an import brings code or types only (a type import leaves no dependency at run time).
import { Glob } from "bun";
import { readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

export interface ImportEdge {
  from: string;
  to: string;
  typeOnly: boolean;
}

const SRC = resolve(import.meta.dir, "../../src");
const STATIC = /(?:^|\n)\s*(import|export)\s+(type\s+)?([^;]*?)\s+from\s+["']([^"']+)["']/g;
const BARE = /(?:^|\n)\s*import\s+["']([^"']+)["']/g;
const DYNAMIC = /\bimport\(\s*["']([^"']+)["']\s*\)/g;

function resolved(fromFile: string, spec: string): string | undefined {
  if (!spec.startsWith(".")) return undefined; // a package
  const target = relative(SRC, join(dirname(join(SRC, fromFile)), spec)).replace(/\.(ts|js)$/, "");
  return target.startsWith("..") ? undefined : target + ".ts";
}

/** Every relative import between modules of src/ (paths relative to src/, e.g. "media/routes.ts"). */
export function importGraph(): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const file of new Glob("**/*.ts").scanSync(SRC)) {
    const text = readFileSync(join(SRC, file), "utf8");
    for (const m of text.matchAll(STATIC)) {
      const to = resolved(file, m[4]!);
      const names = m[3]!;
      // `import type {…}`, or `import { type A, type B }`: types only
      const typeOnly =
        !!m[2] ||
        (/^\{[^}]*\}$/.test(names.trim()) &&
          names
            .replace(/[{}\s]/g, "")
            .split(",")
            .filter(Boolean)
            .every((n) => n.startsWith("type")));
      if (to) edges.push({ from: file, to, typeOnly });
    }
    for (const m of text.matchAll(BARE)) {
      const to = resolved(file, m[1]!);
      if (to) edges.push({ from: file, to, typeOnly: false });
    }
    for (const m of text.matchAll(DYNAMIC)) {
      const to = resolved(file, m[1]!);
      if (to) edges.push({ from: file, to, typeOnly: false });
    }
  }
  return edges;
}

export const folderOf = (path: string) => (path.includes("/") ? path.slice(0, path.indexOf("/")) : path);
