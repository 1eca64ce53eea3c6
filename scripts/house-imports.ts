// One import style (issue 26): relative imports of TypeScript modules name no extension ("./ledger", not
// "./ledger.ts"), as two thirds of them did. Rewrites import/export declarations, import() calls and import("…")
// types in src, bench, test and scripts; leaves alone any specifier that would then resolve to another file.
// `bun scripts/house-imports.ts [--check]`: --check lists what it would change and exits 1 if anything.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import ts from "typescript";

const root = join(import.meta.dir, "..");
const folders = ["src", "bench", "test", "scripts"];
// What Bun's resolver would try for "./x" before "./x.ts"; any of these present makes stripping ambiguous.
const shadows = [".tsx", ".d.ts", ".jsx", ".js", ".mjs", ".cjs", ".json", ".node"];

function listTsFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : listTsFiles(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

function specifiers(source: ts.SourceFile): ts.StringLiteral[] {
  const found: ts.StringLiteral[] = [];
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      if (ts.isStringLiteral(node.moduleSpecifier)) found.push(node.moduleSpecifier);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [first] = node.arguments;
      if (first && ts.isStringLiteral(first)) found.push(first);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      const literal = node.argument.literal;
      if (ts.isStringLiteral(literal)) found.push(literal);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The specifier without ".ts", or undefined when it is not a relative .ts import or stripping would be ambiguous. */
function stripped(fromFile: string, specifier: string): string | undefined {
  if (!/^\.\.?\//.test(specifier) || !specifier.endsWith(".ts")) return undefined;
  const target = join(dirname(fromFile), specifier);
  if (!existsSync(target)) return undefined;
  const bare = target.slice(0, -3);
  if (shadows.some((extension) => existsSync(bare + extension))) return undefined;
  if (existsSync(bare) && statSync(bare).isFile()) return undefined;
  return specifier.slice(0, -3);
}

const check = process.argv.includes("--check");
let changedFiles = 0;
let changedImports = 0;
const skipped: string[] = [];
for (const file of folders.flatMap((folder) => listTsFiles(join(root, folder)))) {
  const text = readFileSync(file, "utf8");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const edits: { start: number; end: number; replacement: string }[] = [];
  for (const literal of specifiers(source)) {
    const replacement = stripped(file, literal.text);
    if (replacement === undefined) {
      if (/^\.\.?\/.*\.ts$/.test(literal.text)) skipped.push(`${relative(root, file)}: ${literal.text}`);
      continue;
    }
    const quote = text[literal.getStart(source)];
    edits.push({ start: literal.getStart(source), end: literal.getEnd(), replacement: quote + replacement + quote });
  }
  if (!edits.length) continue;
  changedFiles++;
  changedImports += edits.length;
  if (check) {
    for (const edit of edits) console.log(`${relative(root, file)}: ${text.slice(edit.start, edit.end)}`);
    continue;
  }
  let out = text;
  for (const edit of edits.sort((a, b) => b.start - a.start)) {
    out = out.slice(0, edit.start) + edit.replacement + out.slice(edit.end);
  }
  writeFileSync(file, out);
}
for (const line of skipped) console.log(`kept (stripping would be ambiguous): ${line}`);
console.log(`${check ? "would rewrite" : "rewrote"} ${changedImports} imports in ${changedFiles} files`);
if (check && changedImports) process.exit(1);
