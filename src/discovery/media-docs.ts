import type { Catalog } from "../catalog/service";
import { ALIAS_PATH } from "../catalog/endpoints";
import type { MediaType } from "../media/model";

// Task creation per media type in /openapi.json. Both doors accept any media model and check its input against the
// model's own schema (media/input-schema.ts), so validation stays in the routes; the document adds, from the live
// catalog, what a generated client needs per type: the models of that type (each linked to its input JSON Schema,
// `input_schema` of GET /v1/models/{model_id}) and the input fields most of them share.

type Json = Record<string, any>;
const TYPES: Array<{ type: MediaType; name: string }> = [
  { type: "image", name: "Image" },
  { type: "video", name: "Video" },
  { type: "audio", name: "Audio" },
];
/** A field is "common" to a type when at least this share of its models take it. */
const COMMON_SHARE = 1 / 3;

function commonFields(catalog: Catalog, type: MediaType): Json {
  const models = catalog.mediaList.filter((m) => m.type === type);
  const seen = new Map<string, { count: number; schema: Json }>();
  for (const m of models)
    for (const [name, schema] of Object.entries<Json>((m.jsonSchema as Json).properties ?? {})) {
      const s = seen.get(name) ?? {
        count: 0,
        schema: {
          ...(schema.type && { type: schema.type }),
          ...(schema.items && { items: { type: schema.items.type } }),
        },
      };
      seen.set(name, { ...s, count: s.count + 1 });
    }
  const fields: Json = {};
  for (const [name, { count, schema }] of seen)
    if (count >= models.length * COMMON_SHARE)
      fields[name] = {
        ...schema,
        description: `Taken by ${count} of ${models.length} ${type} models; see the model's \`input_schema\` for its range.`,
      };
  return fields;
}

function modelField(catalog: Catalog, type: MediaType, base: string): Json {
  const ids = catalog.mediaList.filter((m) => m.type === type).map((m) => m.id);
  return {
    type: "string",
    enum: ids,
    description: `A ${type} model. Its input JSON Schema is \`input_schema\` of \`GET /v1/models/{model_id}\` (\`x-input-schemas\` lists each URL).`,
    "x-input-schemas": Object.fromEntries(ids.map((id) => [id, `${base}/v1/models/${id}`])),
  };
}

/** Adds the per-type schemas to `doc.components` and points the four task-creation operations at them. */
export function documentMediaTypes(doc: Json, catalog: Catalog, base: string) {
  const schemas = doc.components.schemas;
  const native = doc.paths["/api/v1/jobs/createTask"]?.post?.requestBody?.content?.["application/json"];
  const variants: Json[] = [];
  for (const { type, name } of TYPES) {
    if (!catalog.mediaList.some((m) => m.type === type)) continue;
    const model = modelField(catalog, type, base);
    const fields = commonFields(catalog, type);
    schemas[`${name}TaskInput`] = {
      type: "object",
      additionalProperties: true,
      description: `The input of a ${type} task: the fields most ${type} models share; each model accepts exactly the fields of its own \`input_schema\`.`,
      properties: fields,
    };
    if (native) {
      const common = native.schema;
      schemas[`Create${name}Task`] = {
        ...common,
        properties: { ...common.properties, model, input: { $ref: `#/components/schemas/${name}TaskInput` } },
      };
      variants.push({ $ref: `#/components/schemas/Create${name}Task` });
    }
    const alias = doc.paths[ALIAS_PATH[type]]?.post?.requestBody?.content?.["application/json"];
    if (alias) {
      schemas[`${name}TaskRequest`] = { ...alias.schema, properties: { ...fields, ...alias.schema.properties, model } };
      alias.schema = { $ref: `#/components/schemas/${name}TaskRequest` };
    }
  }
  if (native && variants.length)
    native.schema = { oneOf: variants, description: "One variant per media type; `model` decides which." };
}
