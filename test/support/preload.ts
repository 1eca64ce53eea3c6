import { setDefaultTimeout } from "bun:test";
// bunfig's [test] timeout key is ignored (toolchain.md); integration tests start servers and databases. In a run of
// many files this reaches only the first (oven-sh/bun#43787, checked on 1.4.5): the others are back at 5 s unless
// they call setDefaultTimeout themselves, or the run is given --timeout.
setDefaultTimeout(30_000);
// The suite's expectations (which models are served, which answer 410) are of the catalog as of this day; pinned so
// that a model reaching its last day of service (Catalog.retireExpired) does not change them. Servers and CLIs the
// tests start inherit it; test/catalog/retire-expired.test.ts moves the day on purpose.
process.env.CATALOG_DAY ??= "2026-11-27";
