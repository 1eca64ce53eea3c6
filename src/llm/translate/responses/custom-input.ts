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
      const escaped = escapeAt(pending, i);
      if (escaped === "more") break; // the escape continues in the next piece
      if (escaped === null) return stop(out);
      out += escaped.text;
      i += escaped.length;
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

/** The escape at text[i] (a backslash): its text and length; "more" when it is cut short, null when it is not JSON. */
function escapeAt(text: string, i: number): { text: string; length: number } | "more" | null {
  const letter = text[i + 1];
  if (letter === undefined) return "more";
  if (letter === "u") {
    const hex = text.slice(i + 2, i + 6);
    if (hex.length < 4) return "more";
    if (!/^[0-9a-fA-F]{4}$/.test(hex)) return null;
    // a surrogate pair arrives as two halves, joined by the client
    return { text: String.fromCharCode(parseInt(hex, 16)), length: 6 };
  }
  return letter in ESCAPES ? { text: ESCAPES[letter]!, length: 2 } : null;
}
