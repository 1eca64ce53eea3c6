// An upstream's failure code holding U+0000 (fal error_type, kie failCode, OpenAI and Veo error.code): on Postgres
// the task's fail update threw, the engine took it for a passing failure and polled again until the task's deadline,
// which lost the upstream's reason (helper-29). Stored with the character replaced, as its message already was.
// Review (cd8688c): an upstream's failure *code* holding U+0000 (fal's error_type, kie's failCode, OpenAI's
// error.code, Veo's error.code) is stored as it came by failTask (media/task-outcome.ts `fail_code = ${code}`); only the
// message goes through storableText. On Postgres the update fails, the step is "retried" until the deadline, and
// the task ends as deadline_exceeded with the upstream's reason lost.
import { afterAll, describe, expect, test } from "bun:test";
import { client, startMediaGateway, type MediaGateway } from "../media/support";
import { freshPostgres, pgAvailable, skipNote, tempSqlitePath } from "../support/services";

for (const dialect of ["sqlite", "pg"] as const) {
  if (dialect === "pg") skipNote("Postgres", pgAvailable, "a NUL in an upstream failure code on Postgres");
  describe.skipIf(dialect === "pg" && !pgAvailable)(`an upstream failure code holding U+0000 on ${dialect}`, () => {
    let gw: MediaGateway;
    let drop = async () => {};
    afterAll(async () => {
      await gw?.stop();
      await drop();
    });
    test("the task fails with the upstream's reason (character replaced), not at its deadline", async () => {
      let url = tempSqlitePath();
      if (dialect === "pg") ({ url, drop } = await freshPostgres());
      gw = await startMediaGateway({ DATABASE_URL: url, MEDIA_MAX_DEADLINE_SECONDS: "3" });
      const { key } = await gw.account(1000);
      const c = client(gw, key);
      gw.up.control.set({ fail: { message: "nsfw content", code: "content\u0000policy" } }, { provider: "fal" });
      const { json } = await c.createTask("fal-ai/kling-image/o1", { prompt: "x" });
      const rec = await c.waitRecord(json.data.taskId, 10_000);
      expect(rec).toMatchObject({
        state: "fail",
        failCode: "content\uFFFDpolicy",
        failMsg: "The upstream (fal) failed the task (generation error); nothing was charged.",
        creditsConsumed: 0,
      });
    }, 20_000);
  });
}
