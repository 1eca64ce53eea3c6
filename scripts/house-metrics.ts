// House metrics for issue 26's before/after table: long files, long functions, comment-only lines, old private
// vocabulary still in identifiers, and type errors per folder.
// `bun run house:metrics [--list] [--json] [--no-tsc] [--root DIR]`.
// Lines are counted with the TypeScript compiler's own scanner, so a "//" inside a string or template is code.
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import ts from "typescript";

// `--root DIR` measures another checkout (e.g. a worktree of the "before" commit) with this script.
const rootFlag = process.argv.indexOf("--root");
const root = rootFlag > 0 ? resolve(process.argv[rootFlag + 1]) : join(import.meta.dir, "..");
const folders = ["src", "bench", "test", "scripts"];
const longFileLines = 300;
const longFunctionLines = 60;
/** A file header says why in a few lines; formats and history belong in docs and commits. */
const longHeaderLines = 6;

// Identifier fragments the vocabulary of issue 26 retires (settle/release became post/void, and so on); the
// exceptions are names that mean something else, each with why it stays.
const oldWords = [
  /settle/i,
  /release/i,
  /^judgeBody$/,
  /^tctx$/,
  /^Piece$/,
  /^RESYNC$/,
  /^(tend|hurry|wake|turn)$/,
  /^unsure/i,
  /^(finish|partial)$/,
];
const notOldWords = new Map([
  ["allSettled", "Promise.allSettled"],
  ["releaseLock", "a stream reader's releaseLock()"],
  ["CATALOG_RELEASED", "the date this catalog was released"],
  ["released", "a model's release date (a catalog field) and holds:sweep's output key (external, like the tables)"],
  ["settled", "the holds.settled column, the posted amount (a column keeps its name)"],
  ["settle", 'a media pricing rule\'s `settle: "upstream_cost"` (catalog data an operator writes)'],
  ["release", "a task token given back (a concurrency slot, not a hold) and a Postgres pool connection's release()"],
  ["TokenReleases", "task token releases retried until they go through (limits/task-tokens.ts)"],
  ["tokenReleases", "a TokenReleases"],
  ["releaseTokenIf", "a task token's release at a task's final state"],
  ["releaseEndedSinceRead", "the task tokens of tasks that ended since the engine read them"],
  ["finish", "the IR's finish event (the protocols' finish_reason) and the codecs' handlers of it"],
  ["succeedWhileReleasesRefused", "a media test's task token releases refused (Redis away)"],
  ["turn", "a conversation's turn (the bench's agent body, the tests' requests)"],
]);

type FileMetrics = {
  path: string;
  lines: number;
  commentLines: number;
  /** comment-only lines before the file's first line of code (its header) */
  headerLines: number;
  longFunctions: { name: string; line: number; lines: number }[];
  oldNames: string[];
};

function listTsFiles(dir: string): string[] {
  let entries: import("node:fs").Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : listTsFiles(path);
    return /\.(ts|tsx|mts)$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

function functionName(node: ts.Node): string {
  const named = node as ts.Node & { name?: ts.Node };
  if (named.name) return named.name.getText();
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) {
    return parent.name.getText();
  }
  if (ts.isCallExpression(parent)) return `(argument of ${parent.expression.getText().slice(0, 40)})`;
  return "(anonymous)";
}

function measure(path: string): FileMetrics {
  const text = readFileSync(path, "utf8");
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const lineOf = (pos: number) => source.getLineAndCharacterOfPosition(pos).line;
  const lineCount = text.endsWith("\n") ? lineOf(text.length) : lineOf(text.length) + 1;
  const codeLines = new Set<number>();
  const commentedLines = new Set<number>();
  const longFunctions: FileMetrics["longFunctions"] = [];
  const oldNames = new Set<string>();

  const markTrivia = (from: number) => {
    const ranges = [
      ...(ts.getTrailingCommentRanges(text, from) ?? []),
      ...(ts.getLeadingCommentRanges(text, from) ?? []),
    ];
    for (const range of ranges) {
      for (let line = lineOf(range.pos); line <= lineOf(range.end - 1); line++) commentedLines.add(line);
    }
  };
  const visit = (node: ts.Node) => {
    if (
      ts.isFunctionDeclaration(node) ||
      ts.isMethodDeclaration(node) ||
      ts.isArrowFunction(node) ||
      ts.isFunctionExpression(node) ||
      ts.isConstructorDeclaration(node) ||
      ts.isGetAccessor(node) ||
      ts.isSetAccessor(node)
    ) {
      const first = lineOf(node.getStart(source));
      const lines = lineOf(node.getEnd()) - first + 1;
      if (lines > longFunctionLines) longFunctions.push({ name: functionName(node), line: first + 1, lines });
    }
    if (ts.isIdentifier(node) && !notOldWords.has(node.text) && oldWords.some((word) => word.test(node.text))) {
      oldNames.add(node.text);
    }
    const children = node.getChildren(source);
    if (children.length === 0 || ts.isJSDoc(node)) {
      markTrivia(node.getFullStart());
      if (node.kind !== ts.SyntaxKind.EndOfFileToken && !ts.isJSDoc(node)) {
        for (let line = lineOf(node.getStart(source)); line <= lineOf(node.getEnd() - 1); line++) codeLines.add(line);
      }
      return;
    }
    for (const child of children) visit(child);
  };
  visit(source);
  markTrivia(source.endOfFileToken.getFullStart());
  const commentLines = [...commentedLines].filter((line) => !codeLines.has(line)).length;
  const firstCode = Math.min(...codeLines);
  const headerLines = [...commentedLines].filter((line) => line < firstCode).length;
  return {
    path: relative(root, path),
    lines: lineCount,
    commentLines,
    headerLines,
    longFunctions,
    oldNames: [...oldNames],
  };
}

// One tsc run over every folder with a throwaway tsconfig (extending the real one), errors counted per folder.
function typeErrors(): Record<string, number> {
  const config = join(root, "tsconfig.house-metrics.json");
  writeFileSync(config, JSON.stringify({ extends: "./tsconfig.json", include: ["src", "bench", "test"] }));
  try {
    const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
    const run = spawnSync("bun", [tsc, "--noEmit", "--pretty", "false", "-p", config], { cwd: root, encoding: "utf8" });
    const counts: Record<string, number> = { src: 0, bench: 0, test: 0, other: 0 };
    for (const line of run.stdout.split("\n")) {
      const match = /^([^(]+)\(\d+,\d+\): error TS/.exec(line);
      if (!match) continue;
      const folder = match[1].split("/")[0];
      counts[folder in counts ? folder : "other"]++;
    }
    return counts;
  } finally {
    rmSync(config, { force: true });
  }
}

const list = process.argv.includes("--list");
const json = process.argv.includes("--json");
const files = folders.flatMap((folder) => listTsFiles(join(root, folder))).map(measure);
const errors = process.argv.includes("--no-tsc") ? undefined : typeErrors();

const byFolder = folders.map((folder) => {
  const mine = files.filter((file) => file.path.startsWith(`${folder}/`));
  return {
    folder,
    files: mine.length,
    lines: mine.reduce((sum, file) => sum + file.lines, 0),
    longFiles: mine.filter((file) => file.lines > longFileLines),
    longFunctions: mine.flatMap((file) => file.longFunctions.map((fn) => ({ path: file.path, ...fn }))),
    // A test file's describe(…) or eachDatabase(…) body is a group of tests, not a function a reader has to hold in mind at once.
    longTestGroups: mine.flatMap((file) =>
      file.longFunctions.filter((fn) => /^\(argument of (describe|eachDatabase)\b/.test(fn.name)),
    ),
    commentLines: mine.reduce((sum, file) => sum + file.commentLines, 0),
    longHeaders: mine.filter((file) => file.headerLines > longHeaderLines),
    oldNames: [...new Set(mine.flatMap((file) => file.oldNames))].sort(),
  };
});

if (json) {
  console.log(JSON.stringify({ byFolder, typeErrors: errors }, null, 2));
} else {
  console.log(
    `folder   files   lines  files>${longFileLines}  functions>${longFunctionLines}  comment lines  old names  (of which test groups)  headers>${longHeaderLines}`,
  );
  for (const row of byFolder) {
    const cells = [row.files, row.lines, row.longFiles.length, row.longFunctions.length, row.commentLines];
    console.log(
      `${row.folder.padEnd(7)} ${cells.map((cell, i) => String(cell).padStart([6, 7, 10, 14, 14][i])).join(" ")}` +
        `  ${String(row.oldNames.length).padStart(9)}  ${String(row.longTestGroups.length).padStart(10)}  ${String(row.longHeaders.length).padStart(19)}`,
    );
  }
  if (errors) {
    console.log(`type errors (tsc --noEmit over src, bench and test): ${JSON.stringify(errors)}`);
  }
  if (list) {
    for (const row of byFolder) {
      for (const file of row.longFiles) console.log(`long file      ${file.path}: ${file.lines} lines`);
      for (const file of row.longHeaders) console.log(`long header    ${file.path}: ${file.headerLines} lines`);
      for (const fn of row.longFunctions)
        console.log(`long function  ${fn.path}:${fn.line} ${fn.name}: ${fn.lines} lines`);
      if (row.oldNames.length) console.log(`old names in ${row.folder}: ${row.oldNames.join(", ")}`);
    }
  }
}
