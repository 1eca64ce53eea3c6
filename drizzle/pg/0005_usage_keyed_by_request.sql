-- Usage records are keyed by their request id from now on (llm/records.ts): older rows get theirs, so a lookup by
-- request id finds every row by the primary key, and the separate request-id index goes. One record per request
-- id is re-keyed (the first by id): an older version could write a second record for a request whose commit
-- acknowledgement was lost, and two rows cannot share a key. Runs before the index goes, which it uses.
UPDATE "usage_records" SET "id" = "request_id" WHERE "id" = (SELECT min(u2."id") FROM "usage_records" u2 WHERE u2."request_id" = "usage_records"."request_id");--> statement-breakpoint
DROP INDEX IF EXISTS "usage_request";
