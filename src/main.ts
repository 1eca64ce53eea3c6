// Entry point of `bun start` and of the compiled binary. Only no argument (or `serve`) starts the server, so a
// mistyped flag never opens a port by surprise.
import pkg from "../package.json";

const USAGE = `Switchyard ${pkg.version}: an API gateway for LLM, embedding and media models.

Usage:
  switchyard [serve]        start the gateway (settings come from the environment: see the README)
  switchyard cli <command>  run an operator command (switchyard cli help lists them)
  switchyard healthcheck    exit 0 when the local gateway's /readyz answers 200, else 1
  switchyard --version      print the version
  switchyard --help         print this help
`;

const [command, ...rest] = process.argv.slice(2);
switch (command) {
  case undefined:
  case "serve":
    if (rest.length) usageError(`unexpected argument ${JSON.stringify(rest[0])}`);
    else await import("./server");
    break;
  case "cli": {
    const { runCli } = await import("./cli");
    process.exitCode = await runCli(rest);
    break;
  }
  case "healthcheck": {
    const { healthcheck } = await import("./ops/healthcheck");
    process.exitCode = await healthcheck();
    break;
  }
  case "--help":
  case "-h":
  case "help":
    process.stdout.write(USAGE);
    break;
  case "--version":
  case "-v":
  case "version":
    process.stdout.write(`switchyard ${pkg.version}\n`);
    break;
  default:
    usageError(`unknown argument ${JSON.stringify(command)}`);
}

function usageError(message: string): void {
  process.stderr.write(`switchyard: ${message}\n\n${USAGE}`);
  process.exitCode = 2;
}
