// Where a Worker's entry file is, given its path under src/. This file sits at the top of src/ on purpose: from
// source the path resolves next to it, and in a compiled binary every module shares one import.meta.url
// (/$bunfs/root/<binary>) under which each extra entrypoint keeps its path relative to src/ (`bun run build` lists
// them; toolchain.md: without that the worker fails with ModuleNotFound at run time).
export function workerUrl(pathUnderSrc: string): URL {
  return new URL(`./${pathUnderSrc}`, import.meta.url);
}
