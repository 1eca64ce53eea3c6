// A tool call's arguments, streamed in pieces, checked as a JSON object prefix as they arrive. Another model's
// arguments may not be JSON (`{"city": Paris}`), and an Anthropic SDK parses the accumulated input_json_delta text on
// every piece, failing the whole stream at the first character that cannot continue a JSON value. So the Messages
// writer forwards a piece only as far as the text stays a prefix of a JSON object, and at the call's end sends what
// closes that prefix into an object (`closing`): a client gets the object as far as it was valid, never a broken stream.

type Mode =
  | "start" // before the top-level `{`
  | "key" // a key or, right after `{`, the `}`
  | "colon"
  | "value" // a value or, right after `[`, the `]`
  | "after" // after a value: `,` or a closing bracket
  | "string"
  | "number"
  | "literal"
  | "done"; // the top-level object has closed: whitespace only

const WHITESPACE = new Set([" ", "\t", "\n", "\r"]);
const ESCAPES = new Set(['"', "\\", "/", "b", "f", "n", "r", "t"]);
const HEX = /^[0-9a-fA-F]$/;
const LITERALS: Record<string, string> = { t: "true", f: "false", n: "null" };
/** A number's states, and whether it may end in each (`-`, `1.` and `1e` may not). */
const NUMBER_ENDS: Record<string, boolean> = {
  sign: false,
  zero: true,
  int: true,
  dot: false,
  frac: true,
  exp: false,
  expSign: false,
  expDigits: true,
};

export class JsonObjectPrefix {
  private mode: Mode = "start";
  private stack: ("{" | "[")[] = [];
  /** right after `{` or `[`: the container may close at once */
  private opened = false;
  private stringIsKey = false;
  /** in a string: 0, or 1 after `\`, or 2–5 inside `\uXXXX` (hex digits so far + 2) */
  private escape = 0;
  private number = "";
  private literal = "";
  private literalAt = 0;
  broken = false;

  /** Feeds `piece`; returns how much of it keeps the text so far a prefix of a JSON object (all of it, or less once). */
  feed(piece: string): number {
    if (this.broken) return 0;
    for (let i = 0; i < piece.length; i++) {
      if (!this.step(piece[i]!)) {
        this.broken = true;
        return i;
      }
    }
    return piece.length;
  }

  /** What turns the valid text so far into one whole JSON object ("{}" when nothing of it was sent). */
  closing(): string {
    let out = "";
    switch (this.mode) {
      case "start":
        return "{}";
      case "done":
        return "";
      case "string":
        out += this.escape === 1 ? 'n"' : this.escape >= 2 ? `${"0".repeat(6 - this.escape)}"` : '"';
        out += this.stringIsKey ? ":null" : "";
        break;
      case "number":
        out += NUMBER_ENDS[this.number] ? "" : "0";
        break;
      case "literal":
        out += this.literal.slice(this.literalAt);
        break;
      case "key":
        out += this.opened ? "" : '"":null';
        break;
      case "colon":
        out += ":null";
        break;
      case "value":
        out += this.opened ? "" : "null";
        break;
    }
    for (let i = this.stack.length - 1; i >= 0; i--) out += this.stack[i] === "{" ? "}" : "]";
    return out;
  }

  private step(c: string): boolean {
    switch (this.mode) {
      case "string":
        return this.inString(c);
      case "number":
        if (this.inNumber(c)) return true;
        if (!NUMBER_ENDS[this.number]) return false;
        this.mode = "after";
        return this.step(c);
      case "literal":
        if (c !== this.literal[this.literalAt]) return false;
        if (++this.literalAt === this.literal.length) this.mode = "after";
        return true;
    }
    if (WHITESPACE.has(c)) return true;
    switch (this.mode) {
      case "start":
        return c === "{" && this.open("{");
      case "key":
        if (c === "}" && this.opened) return this.closeContainer("{");
        if (c !== '"') return false;
        return this.startString(true);
      case "colon":
        if (c !== ":") return false;
        this.mode = "value";
        this.opened = false;
        return true;
      case "value":
        if (c === "]" && this.opened) return this.closeContainer("[");
        return this.startValue(c);
      case "after":
        if (c === ",") {
          this.mode = this.stack.at(-1) === "{" ? "key" : "value";
          this.opened = false;
          return true;
        }
        return (c === "}" || c === "]") && this.closeContainer(c === "}" ? "{" : "[");
      default: // done
        return false;
    }
  }

  private open(bracket: "{" | "["): true {
    this.stack.push(bracket);
    this.mode = bracket === "{" ? "key" : "value";
    this.opened = true;
    return true;
  }

  /** Leaves the state as it was when `bracket` does not close the innermost container: closing() reads it. */
  private closeContainer(bracket: "{" | "["): boolean {
    if (this.stack.at(-1) !== bracket) return false;
    this.stack.pop();
    this.mode = this.stack.length === 0 ? "done" : "after";
    return true;
  }

  private startValue(c: string): boolean {
    if (c === "{" || c === "[") return this.open(c);
    if (c === '"') return this.startString(false);
    if (c === "-" || (c >= "0" && c <= "9")) {
      this.mode = "number";
      this.number = c === "-" ? "sign" : c === "0" ? "zero" : "int";
      return true;
    }
    const literal = LITERALS[c];
    if (!literal) return false;
    this.mode = "literal";
    this.literal = literal;
    this.literalAt = 1;
    return true;
  }

  private startString(isKey: boolean): true {
    this.mode = "string";
    this.stringIsKey = isKey;
    this.escape = 0;
    return true;
  }

  private inString(c: string): boolean {
    if (this.escape === 1) {
      if (c === "u") this.escape = 2;
      else if (ESCAPES.has(c)) this.escape = 0;
      else return false;
      return true;
    }
    if (this.escape >= 2) {
      if (!HEX.test(c)) return false;
      this.escape = this.escape === 5 ? 0 : this.escape + 1;
      return true;
    }
    if (c === "\\") this.escape = 1;
    else if (c === '"') this.mode = this.stringIsKey ? "colon" : "after";
    else if (c < " ") return false; // a control character must be escaped
    return true;
  }

  private inNumber(c: string): boolean {
    const digit = c >= "0" && c <= "9";
    const exponent = c === "e" || c === "E";
    let to: string | undefined;
    switch (this.number) {
      case "sign":
        to = digit ? (c === "0" ? "zero" : "int") : undefined;
        break;
      case "zero":
        to = c === "." ? "dot" : exponent ? "exp" : undefined;
        break;
      case "int":
        to = digit ? "int" : c === "." ? "dot" : exponent ? "exp" : undefined;
        break;
      case "dot":
      case "frac":
        to = digit ? "frac" : this.number === "frac" && exponent ? "exp" : undefined;
        break;
      case "exp":
        to = digit ? "expDigits" : c === "+" || c === "-" ? "expSign" : undefined;
        break;
      default: // expSign, expDigits
        to = digit ? "expDigits" : undefined;
    }
    if (to === undefined) return false;
    this.number = to;
    return true;
  }
}
