import { setDefaultTimeout } from "bun:test";
// bunfig's [test] timeout key is ignored (toolchain.md); integration tests start servers and databases.
setDefaultTimeout(30_000);
