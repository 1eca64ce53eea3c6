import { buildCatalog, type Catalog } from "./catalog/service";
import { compileMediaModel } from "./media/model";

// The catalog with its media entries compiled by the media module: the catalog hands data, the media module
// compiles its schemas and prices. Here, above both, so that neither imports the other's code.

/**
 * The built-in catalog, merged with the operator's CATALOG_PATH file when given (catalog/service.ts buildCatalog),
 * its lifecycles judged as of today, or of `day` (CATALOG_DAY) when given.
 */
export function loadCatalog(overridePath?: string, day?: string): Catalog {
  const now = day ? () => Date.parse(day) + 43_200_000 : Date.now; // noon of that day
  return buildCatalog(overridePath, compileMediaModel, now);
}
