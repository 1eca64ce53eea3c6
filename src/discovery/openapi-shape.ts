// Generic repairs of what @elysiajs/openapi generates, so that a code generator can use the document: numbers
// stated as numbers (not Elysia's number-or-digit-string unions), 3.1's null in the type list instead of 3.0's
// `nullable`, records as `additionalProperties`, a self-parsing route's `body` schema put back, and a wildcard
// route's parameter named as its detail says (`...pathName(...)`), not `{wildcard}`.

type Json = Record<string, any>;

const STRING_FORMS = new Set(["integer", "numeric", "number", "boolean"]);

/** Collapses `anyOf: [string of digits, number]` to the number; drops 3.0's `nullable`. Mutates and returns `node`. */
export function numbersAreNumbers<T>(node: T): T {
  if (Array.isArray(node)) {
    node.forEach(numbersAreNumbers);
    return node;
  }
  if (!node || typeof node !== "object") return node;
  const o = node as Json;
  delete o.nullable;
  // t.Record(t.String(), …): a map, said the way generators read it
  const pattern = o.patternProperties;
  if (pattern && Object.keys(pattern).length === 1 && pattern["^(.*)$"]) {
    const value = pattern["^(.*)$"];
    delete o.patternProperties;
    o.additionalProperties = Object.keys(value).length ? value : true;
  }
  const branches = o.anyOf;
  if (Array.isArray(branches) && branches.length === 2) {
    const i = branches.findIndex((b: Json) => b?.type === "string" && STRING_FORMS.has(b.format));
    if (i >= 0) {
      const { anyOf: _, ...outer } = o;
      const kept = branches[1 - i];
      for (const k of Object.keys(o)) delete o[k];
      Object.assign(o, kept, outer);
    }
  }
  for (const v of Object.values(o)) numbersAreNumbers(v);
  return node;
}

/** Spread into a wildcard route's `detail`: the name its `*` has in the document. */
export function pathName(name: string, description: string): Record<string, unknown> {
  return { "x-path-name": { name, description } };
}

interface RouteLike {
  method: string;
  path: string;
  hooks?: { body?: unknown };
}

/** The path of a route in the document: `:id` → `{id}`, a trailing `*` → the name its detail gave (or `path`). */
export function documentPath(path: string, op?: Json): string {
  const name = op?.["x-path-name"]?.name ?? "path";
  return path.replace(/:([^/]+)/g, "{$1}").replace(/\*$/, `{${name}}`);
}

/** Puts back the JSON body schema of a route whose own parser left the generated `content` empty. */
export function restoreBody(op: Json, route: RouteLike | undefined) {
  const body = route?.hooks?.body;
  if (!op.requestBody || Object.keys(op.requestBody.content ?? {}).length || !body) return;
  op.requestBody.content = { "application/json": { schema: JSON.parse(JSON.stringify(body)) } };
}

/** Renames the `*` parameter of a wildcard operation to the name its detail gave. */
export function nameWildcard(op: Json) {
  const named = op["x-path-name"];
  delete op["x-path-name"];
  if (!named) return;
  op.parameters = [
    ...(op.parameters ?? []).filter((p: Json) => p.name !== "*"),
    { name: named.name, in: "path", required: true, description: named.description, schema: { type: "string" } },
  ];
  op.operationId = String(op.operationId).replace(
    /\*$/,
    "By" + named.name.replace(/(^|_)(\w)/g, (_: string, __: string, c: string) => c.toUpperCase()),
  );
}
