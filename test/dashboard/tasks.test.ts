// The dashboard's Tasks page, from tasks the media engine really finished against the fake upstreams (created with
// the account's key, worked by the engine, result files stored): each finished task links its result files and
// previews them by their media type, an image as <img>, a video as <video>, audio as <audio>; a failed task shows
// its error, a running one the credits it holds. No row is typed into the test. On SQLite and Postgres.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { Users } from "../../src/dashboard/users";
import { silentLogger } from "../../src/log";
import { sweepExpiredResults } from "../../src/media/retention";
import { mediaSettingsOf } from "../../src/media/settings";
import { createStorage } from "../../src/media/storage";
import { client, startMediaGateway, waitFor, type MediaGateway } from "../media/support";
import { PASSWORD, signIn } from "../support/dashboard";
import { databaseFor, dialects } from "../support/services";

for (const dialect of dialects)
  describe.skipIf(!dialect.available)(`Tasks page (${dialect.name})`, () => {
    let gw: MediaGateway;
    let dropDb = async () => {};
    let session: Awaited<ReturnType<typeof signIn>>;
    let c: ReturnType<typeof client>;
    const done: Record<"image" | "video" | "audio" | "failed" | "running", string> = {} as any;

    beforeAll(
      async () => {
        const db = await databaseFor(dialect.name);
        dropDb = db.drop;
        gw = await startMediaGateway({ DATABASE_URL: db.url });
        const { accountId, key } = await gw.account(10_000, { maxConcurrentTasks: 10 });
        const email = "tasks@example.com";
        await new Users(gw.ctx.db).create(accountId, email, PASSWORD);
        session = await signIn(gw, email);
        c = client(gw, key);
        const create = async (model: string, input: Record<string, unknown>) => {
          const r = await c.createTask(model, input);
          expect(r.status).toBe(200);
          return r.json.data.taskId as string;
        };
        done.image = await create("google/nano-banana", { prompt: "a fox" });
        done.video = await create("kling-3.0/video", { prompt: "a fox running", duration: 5 });
        done.audio = await create("suno/v5", { prompt: "a song about foxes" });
        gw.up.control.set({ fail: { message: "the model refused" } }, { model: "z-image" });
        done.failed = await create("z-image", { prompt: "x" });
        gw.up.control.set({ never: true }, { provider: "fal" });
        done.running = await create("fal-ai/kling-image/o1", { prompt: "slow" });
        for (const id of [done.image, done.video, done.audio, done.failed]) await c.waitRecord(id);
        await waitFor(
          async () => (await c.record(done.running))?.state === "generating",
          10_000,
          "the running task to be submitted",
        );
      },
      { timeout: 60_000 },
    ); // five tasks through the engine, on a shared machine
    afterAll(
      async () => {
        await gw.stop();
        await dropDb();
      },
      { timeout: 30_000 },
    );

    const tasksPage = async (query = "") => {
      const r = await fetch(gw.url + "/dashboard/tasks" + query, { headers: { cookie: session.cookie } });
      expect(r.status).toBe(200);
      return r.text();
    };

    /** The page's table row of a task. */
    const rowOf = (page: string, taskId: string) => {
      const row = page.split("<tr>").find((r) => r.includes(`<code>${taskId}</code>`));
      expect(row).toBeDefined();
      return row!;
    };

    /** The result files the engine stored for a task, as the task API gives them (paths on the gateway's origin). */
    async function resultPaths(taskId: string): Promise<string[]> {
      const rec = await c.record(taskId);
      expect(rec.state).toBe("success");
      const urls: string[] = JSON.parse(rec.resultJson).resultUrls;
      expect(urls.length).toBeGreaterThan(0);
      return urls.map((u) => new URL(u).pathname);
    }

    test.each([
      ["image", "img", "image/png"],
      ["video", "video", "video/mp4"],
      ["audio", "audio", "audio/mpeg"],
    ] as const)("a finished %s task links each result file and previews it as <%s>", async (kind, tag, type) => {
      const row = rowOf(await tasksPage(), done[kind]);
      const files = await gw.ctx.db.all<{ id: string; content_type: string }>(
        sql`select id, content_type from result_files where task_id = ${done[kind]}`,
      );
      const typeOf = new Map(files.map((f) => [f.id, f.content_type]));
      const paths = await resultPaths(done[kind]);
      const previewed = paths.filter((p) => typeOf.get(p.split("/")[2]!) === type); // /files/<token>/<name>
      expect(previewed.length).toBeGreaterThan(0);
      for (const path of paths) expect(row).toContain(`<a href="${path}"`);
      for (const path of previewed) {
        expect(row).toMatch(new RegExp(`<${tag} [^>]*src="${path}"`));
        const file = await fetch(gw.url + path); // the link works: the gateway serves the file
        expect(file.status).toBe(200);
        expect(file.headers.get("content-type")).toBe(type);
      }
    });

    test("a failed task shows its error and no result; a running one what it holds; the state filter", async () => {
      const page = await tasksPage();
      const failed = rowOf(page, done.failed);
      expect(failed).toContain("fail");
      expect(failed).toContain('class="error"');
      expect(failed).not.toContain("/files/");
      const running = rowOf(page, done.running);
      expect(running).toMatch(/≤ [\d.,]+ \(held\)/);
      expect(running).not.toContain("/files/");

      const filtered = await tasksPage("?state=success");
      expect(filtered).toContain(done.image);
      expect(filtered).not.toContain(done.failed);
      expect(filtered).not.toContain(done.running);
    });

    test("expired results are marked, not linked", async () => {
      // The retention sweep, run as if the retention period had passed: it deletes the files and flags the tasks.
      const storage = createStorage(mediaSettingsOf(gw.ctx.config).storage);
      expect(
        await sweepExpiredResults({ db: gw.ctx.db, storage, log: silentLogger }, Date.now() + 365 * 86_400_000),
      ).toBeGreaterThan(0);
      const row = rowOf(await tasksPage(), done.image);
      expect(row).toContain("expired");
      expect(row).not.toContain("/files/");
    });
  });
