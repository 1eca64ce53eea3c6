import { setDefaultTimeout } from "bun:test";
// bunfig's [test] timeout key is ignored (toolchain.md); integration tests start servers and databases. In a run of
// many files this reaches only the first (oven-sh/bun#43787, checked on 1.4.5): the others are back at 5 s unless
// they call setDefaultTimeout themselves, or the run is given --timeout.
setDefaultTimeout(30_000);
