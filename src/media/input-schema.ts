// Input definitions of media models: a small JSON-schema-like format kept as data in the catalog (the format and
// its rules: docs/media-catalog-format.md). Validation is strict so a mistake never silently costs money: an
// unknown field is refused by name (a typo would otherwise fall back to a default, and a different price), null
// counts as absent, and numbers may come as decimal strings (clients written for kie send durations that way).

export type FieldType = "string" | "integer" | "number" | "boolean" | "url" | "array";

export interface PropertyDef {
  type: FieldType;
  description: string;
  enum?: Array<string | number>;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  items?: "url" | "string";
  default?: unknown;
}

export interface InputSchema {
  properties: Record<string, PropertyDef>;
  required: string[];
}

export type ValidationResult =
  | { ok: true; value: Record<string, unknown> }
  | { ok: false; field: string; message: string };

const TYPES: FieldType[] = ["string", "integer", "number", "boolean", "url", "array"];
const KEYS = new Set([
  "type",
  "description",
  "enum",
  "minimum",
  "maximum",
  "minLength",
  "maxLength",
  "minItems",
  "maxItems",
  "items",
  "default",
]);

/** Throws a clear error on a malformed definition (run when the catalog loads, so a bad entry never serves). */
export function checkInputSchema(schema: unknown, where = "input"): asserts schema is InputSchema {
  const fail = (msg: string): never => {
    throw new Error(`${where}: ${msg}`);
  };
  if (!isObject(schema)) fail("must be an object with properties and required");
  const s = schema as Record<string, unknown>;
  for (const k of Object.keys(s)) if (k !== "properties" && k !== "required") fail(`unknown key "${k}"`);
  if (!isObject(s.properties) || Object.keys(s.properties).length === 0) fail("properties must be a non-empty object");
  if (!Array.isArray(s.required)) fail("required must be an array of property names");
  const props = s.properties as Record<string, unknown>;
  for (const name of s.required as unknown[]) {
    if (typeof name !== "string" || !Object.hasOwn(props, name))
      fail(`required names an unknown property ${JSON.stringify(name)}`);
  }
  if (new Set(s.required as string[]).size !== (s.required as string[]).length) fail("required has duplicates");
  for (const [name, def] of Object.entries(props)) {
    if (name in Object.prototype) fail(`property "${name}": the name of an Object.prototype member`);
    checkProperty(name, def, (m) => fail(`property "${name}": ${m}`));
  }
}

function checkProperty(name: string, def: unknown, fail: (m: string) => never): void {
  if (!isObject(def)) fail("must be an object");
  const d = def as Record<string, unknown>;
  for (const k of Object.keys(d)) if (!KEYS.has(k)) fail(`unknown keyword "${k}"`);
  if (!TYPES.includes(d.type as FieldType)) fail(`type must be one of ${TYPES.join(", ")}`);
  if (typeof d.description !== "string" || d.description.trim() === "") fail("description is required");
  const type = d.type as FieldType;
  const numeric = type === "integer" || type === "number";
  for (const k of ["minimum", "maximum"]) {
    if (d[k] !== undefined && (!numeric || typeof d[k] !== "number")) fail(`${k} needs a numeric type and a number`);
  }
  for (const k of ["minLength", "maxLength"]) {
    if (d[k] !== undefined && (type !== "string" || !isCount(d[k]))) fail(`${k} needs type string and a count`);
  }
  for (const k of ["minItems", "maxItems"]) {
    if (d[k] !== undefined && (type !== "array" || !isCount(d[k]))) fail(`${k} needs type array and a count`);
  }
  if (d.items !== undefined && (type !== "array" || (d.items !== "url" && d.items !== "string"))) {
    fail(`items must be "url" or "string" on an array`);
  }
  if (d.enum !== undefined) {
    if (!Array.isArray(d.enum) || d.enum.length === 0) fail("enum must be a non-empty array");
    if (type !== "string" && !numeric) fail("enum is only for string, integer and number");
    const enumDef = { type } as PropertyDef;
    for (const v of d.enum as unknown[]) {
      const r = checkValue(name, enumDef, v);
      if ("message" in r) fail(`enum value ${JSON.stringify(v)}: ${r.message}`);
      if (r.value !== v) fail(`enum value ${JSON.stringify(v)} must be a ${type} literal, not a string`);
    }
  }
  if (d.default !== undefined) {
    const r = checkValue(name, d as unknown as PropertyDef, d.default);
    if ("message" in r) fail(`default ${JSON.stringify(d.default)} is invalid: ${r.message}`);
    if (r.value !== d.default) fail(`default ${JSON.stringify(d.default)} must be a ${type} literal`);
  }
}

/** Check an input against its definition; on success the value has defaults applied and numeric strings parsed. */
export function validateInput(schema: InputSchema, input: unknown): ValidationResult {
  if (!isObject(input)) return { ok: false, field: "input", message: "input must be a JSON object" };
  const value: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(input)) {
    // Own properties only: "__proto__" or "constructor" would otherwise find Object.prototype's members, pass as
    // known fields, and (assigned below) set the value's prototype, which pricing would read and the upstream never see.
    const def = Object.hasOwn(schema.properties, name) ? schema.properties[name] : undefined;
    if (!def) return { ok: false, field: name, message: `unknown field "${name}" (allowed: ${allowed(schema)})` };
    if (raw === null || raw === undefined) continue;
    const r = checkValue(name, def, raw);
    if ("message" in r) return { ok: false, ...r };
    value[name] = r.value;
  }
  for (const name of schema.required) {
    if (!Object.hasOwn(value, name)) return { ok: false, field: name, message: `"${name}" is required` };
  }
  for (const [name, def] of Object.entries(schema.properties)) {
    if (!Object.hasOwn(value, name) && def.default !== undefined) value[name] = def.default;
  }
  return { ok: true, value };
}

type Checked = { value: unknown } | { field: string; message: string };

function checkValue(name: string, def: PropertyDef, raw: unknown): Checked {
  const bad = (message: string, field = name) => ({ field, message });
  let v = raw;
  switch (def.type) {
    case "integer":
    case "number": {
      if (typeof v === "string" && /^-?\d+(\.\d+)?$/.test(v.trim())) v = Number(v.trim());
      if (typeof v !== "number" || !Number.isFinite(v)) return bad(`"${name}" must be a ${def.type}`);
      if (def.type === "integer" && !Number.isInteger(v)) return bad(`"${name}" must be a whole number`);
      if (def.minimum !== undefined && v < def.minimum) return bad(`"${name}" must be at least ${def.minimum}`);
      if (def.maximum !== undefined && v > def.maximum) return bad(`"${name}" must be at most ${def.maximum}`);
      break;
    }
    case "string": {
      if (typeof v !== "string") return bad(`"${name}" must be a string`);
      const len = [...v].length;
      if (def.minLength !== undefined && len < def.minLength) {
        return bad(
          def.minLength === 1 ? `"${name}" must not be empty` : `"${name}" needs at least ${def.minLength} characters`,
        );
      }
      if (def.maxLength !== undefined && len > def.maxLength)
        return bad(`"${name}" is longer than ${def.maxLength} characters`);
      break;
    }
    case "boolean":
      if (typeof v !== "boolean") return bad(`"${name}" must be true or false`);
      break;
    case "url":
      if (!isHttpUrl(v)) return bad(`"${name}" must be an http(s) URL`);
      break;
    case "array": {
      if (!Array.isArray(v)) return bad(`"${name}" must be an array`);
      const count = v.length;
      if (def.minItems !== undefined && count < def.minItems)
        return bad(`"${name}" needs at least ${def.minItems} item(s)`);
      if (def.maxItems !== undefined && count > def.maxItems)
        return bad(`"${name}" takes at most ${def.maxItems} item(s)`);
      const itemsAreUrls = (def.items ?? "url") === "url";
      for (let i = 0; i < count; i++) {
        const ok = itemsAreUrls ? isHttpUrl(v[i]) : typeof v[i] === "string";
        if (!ok) return bad(`item ${i} must be ${itemsAreUrls ? "an http(s) URL" : "a string"}`, `${name}[${i}]`);
      }
      break;
    }
  }
  if (def.enum && !def.enum.includes(v as string | number)) {
    return bad(`"${name}" must be one of ${def.enum.map((e) => JSON.stringify(e)).join(", ")}`);
  }
  return { value: v };
}

/** Real JSON Schema (draft 2020-12) of an input definition, for OpenAPI and the model cards. */
export function toJsonSchema(schema: InputSchema): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const [name, def] of Object.entries(schema.properties)) {
    const p: Record<string, unknown> = { description: def.description };
    if (def.type === "url") Object.assign(p, { type: "string", format: "uri" });
    else if (def.type === "array") {
      p.type = "array";
      p.items = (def.items ?? "url") === "url" ? { type: "string", format: "uri" } : { type: "string" };
    } else p.type = def.type;
    for (const k of [
      "enum",
      "minimum",
      "maximum",
      "minLength",
      "maxLength",
      "minItems",
      "maxItems",
      "default",
    ] as const) {
      if (def[k] !== undefined) p[k] = def[k];
    }
    properties[name] = p;
  }
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties,
    required: [...schema.required],
    additionalProperties: false,
  };
}

function allowed(schema: InputSchema): string {
  return Object.keys(schema.properties).join(", ");
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isCount(v: unknown): boolean {
  return typeof v === "number" && Number.isInteger(v) && v >= 0;
}

function isHttpUrl(v: unknown): boolean {
  if (typeof v !== "string") return false;
  const u = URL.parse(v);
  return u !== null && (u.protocol === "http:" || u.protocol === "https:") && u.hostname !== "";
}
