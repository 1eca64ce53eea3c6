// Checks a real answer against what /openapi.json declares for its operation: the status is listed (an error's
// code among the `x-error-codes` of that status; `default` only for codes it names), the content-type is one the
// response declares, and the body validates against that content's schema (Ajv, JSON Schema 2020-12, every `$ref`
// resolved inside the document). A server-sent event stream is checked event by event against the schema of one
// event's `data`. Independent of the gateway's code: it reads only the published document.
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";

type Json = Record<string, any>;

export interface Answer {
  status: number;
  contentType: string;
  text: string;
}

export async function answerOf(res: Response): Promise<Answer> {
  return { status: res.status, contentType: res.headers.get("content-type") ?? "", text: await res.text() };
}

const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll("~", "~0").replaceAll("/", "~1")).join("/");
const mediaType = (contentType: string) => contentType.split(";")[0]!.trim().toLowerCase();
const isJson = (type: string) => type === "application/json" || type.endsWith("+json");

/** The `data` of each event of a server-sent event stream, `[DONE]` left out. */
function eventData(text: string): string[] {
  return text
    .split(/\r?\n\r?\n/)
    .map((block) =>
      block
        .split(/\r?\n/)
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).replace(/^ /, ""))
        .join("\n"),
    )
    .filter((d) => d && d !== "[DONE]");
}

/** The code an error body names, in any of the three error shapes. */
function errorCode(body: any): string | undefined {
  if (typeof body?.error_code === "string") return body.error_code; // the task envelope
  return typeof body?.error?.code === "string" ? body.error.code : undefined;
}

export function answerChecker(doc: Json) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(doc, "openapi");

  /** What is wrong with `answer` as the answer of `method path` (a documented path template); [] when nothing. */
  /** `upstream`: the answer is an upstream's own error, passed on; its response must say it may be. */
  return function problems(method: string, path: string, answer: Answer, upstream = false): string[] {
    const name = `${method.toUpperCase()} ${path} → ${answer.status}`;
    const op = doc.paths[path]?.[method.toLowerCase()];
    if (!op) return [`${name}: no such operation in the document`];
    let body: any;
    const type = mediaType(answer.contentType);
    if (isJson(type) && method.toUpperCase() !== "HEAD") {
      try {
        body = JSON.parse(answer.text);
      } catch {
        return [`${name}: the body is not JSON`];
      }
    }
    const code = answer.status >= 400 ? errorCode(body) : undefined;
    const own = op.responses[String(answer.status)];
    const fallback = op.responses.default;
    const status = own ? String(answer.status) : "default";
    const response = own ?? fallback;
    if (!response) return [`${name}: status not declared`];
    const out: string[] = [];
    const codes: string[] | undefined = response["x-error-codes"];
    if (upstream && response["x-upstream-errors"] !== true)
      out.push(`${name}: the ${status} response does not say an upstream's error is passed on`);
    if (answer.status >= 400 && codes && !upstream && !(code && codes.includes(code)))
      out.push(`${name}: code ${code} not among the ${status} response's codes (${codes.join(", ")})`);
    if (method.toUpperCase() === "HEAD") return out;
    const content = response.content ?? {};
    if (answer.text === "" && !Object.keys(content).length) return out; // a 301 or 304: no body, none declared
    const declared = Object.keys(content).find((t) => mediaType(t) === type);
    if (!declared) {
      out.push(`${name}: content-type ${answer.contentType} not declared (${Object.keys(content).join(", ")})`);
      return out;
    }
    if (!content[declared].schema) return out;
    const at = `openapi#/${pointer("paths", path, method.toLowerCase(), "responses", status, "content", declared, "schema")}`;
    const validate = ajv.getSchema(at) ?? ajv.compile({ $ref: at });
    const check = (value: unknown, what: string) => {
      if (!validate(value))
        out.push(
          `${name} ${what}: ${ajv.errorsText(validate.errors, { separator: "; " })} in ${JSON.stringify(value).slice(0, 300)}`,
        );
    };
    if (isJson(type)) check(body, "body");
    else if (type === "text/event-stream")
      for (const [i, data] of eventData(answer.text).entries()) check(JSON.parse(data), `event ${i}`);
    else check(answer.text, "body");
    return out;
  };
}
