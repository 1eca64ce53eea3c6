-- Usage records are keyed by their request id from now on (llm/records.ts): older rows get theirs, so a lookup by
-- request id finds every row by the primary key, and the separate request-id index goes. Request ids are the
-- gateway's own, one record per request.
UPDATE `usage_records` SET `id` = `request_id`;--> statement-breakpoint
DROP INDEX `usage_request`;
