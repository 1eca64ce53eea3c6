ALTER TABLE "usage_records" ADD COLUMN "held" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "usage_records" ADD COLUMN "entry_id" text;