ALTER TABLE "usage_records" ADD COLUMN "cache_write_1h_tokens" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "usage_records" ADD COLUMN "web_search_calls" bigint DEFAULT 0 NOT NULL;