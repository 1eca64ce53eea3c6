// A custom (freeform) tool's input travels upstream as the one string argument of a function call,
// {"input": "..."}, streamed in JSON pieces. This reads the string's text out of those pieces as they come, so a
// client gets custom_tool_call_input deltas while the model writes, not the whole input at the end.
// Anything not shaped {"input": "... (another key first, invalid JSON) stops the reading; the item's done event
// then carries the input as customInput reads it from the whole arguments.

const OPENING = /^\s*\{\s*"input"\s*:\s*"/;
const ESCAPES: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };

export function customInputReader(): { feed(piece: string): string } {
  let state: "opening" | "string" | "stopped" = "opening";
  let pending = ""; // text not yet readable: the opening so far, or an escape cut between pieces

  function readString(): string {
    let out = "";
    let i = 0;
    while (i < pending.length) {
      const c = pending[i]!;
      if (c === '"') {
        state = "stopped"; // the string ended: what follows is the rest of the JSON
        pending = "";
        return out;
      }
      if (c !== "\\") {
        out += c;
        i++;
        continue;
      }
      const e = pending[i + 1];
      if (e === undefined) break; // the escape continues in the next piece
      if (e === "u") {
        const hex = pending.slice(i + 2, i + 6);
        if (hex.length < 4) break;
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) return stop(out);
        out += String.fromCharCode(parseInt(hex, 16)); // a surrogate pair arrives as two halves, joined by the client
        i += 6;
        continue;
      }
      if (!(e in ESCAPES)) return stop(out);
      out += ESCAPES[e];
      i += 2;
    }
    pending = pending.slice(i);
    return out;
  }

  function stop(out: string): string {
    state = "stopped";
    pending = "";
    return out;
  }

  return {
    feed(piece) {
      if (state === "stopped") return "";
      pending += piece;
      if (state === "opening") {
        const m = OPENING.exec(pending);
        if (!m) {
          // a prefix of the opening waits for more; anything else never will be one
          if (!'{"input":"'.startsWith(pending.replace(/\s+/g, ""))) state = "stopped";
          return "";
        }
        pending = pending.slice(m[0].length);
        state = "string";
      }
      return readString();
    },
  };
}
