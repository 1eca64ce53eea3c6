export {};
// Entry point of `bun start` and of the compiled binary: `switchyard` serves, `switchyard cli ...` runs an
// operator command (the same as `bun run cli ...`), `switchyard healthcheck` asks the local gateway for /readyz.
if (process.argv[2] === "cli") {
  const { runCli } = await import("./cli");
  process.exitCode = await runCli(process.argv.slice(3));
} else if (process.argv[2] === "healthcheck") {
  const { healthcheck } = await import("./ops/healthcheck");
  process.exitCode = await healthcheck();
} else {
  await import("./server");
}
