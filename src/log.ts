// Structured JSON logs, one line per event. Callers pass fields, never secrets: keys, tokens and upstream
// credentials are not logged anywhere (a test greps the output for them).
export type Level = "debug" | "info" | "warn" | "error";
const order: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  /** whether lines of `level` are written: a caller skips putting together a line nobody will see */
  enabled(level: Level): boolean;
  debug(msg: string, fields?: object): void;
  info(msg: string, fields?: object): void;
  warn(msg: string, fields?: object): void;
  error(msg: string, fields?: object): void;
}

export function createLogger(
  level: Level = "info",
  write: (line: string) => void = (l) => process.stdout.write(l + "\n"),
): Logger {
  const min = order[level];
  const enabled = (lvl: Level) => order[lvl] >= min;
  const emit = (lvl: Level) => (msg: string, fields?: object) => {
    if (!enabled(lvl)) return;
    write(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields }));
  };
  return { enabled, debug: emit("debug"), info: emit("info"), warn: emit("warn"), error: emit("error") };
}

export const silentLogger: Logger = { enabled: () => false, debug() {}, info() {}, warn() {}, error() {} };
