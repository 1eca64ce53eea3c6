CREATE TABLE "accounts" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"webhook_secret" text,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"name" text NOT NULL,
	"prefix" text NOT NULL,
	"key_hash" text NOT NULL,
	"rate_requests" bigint,
	"rate_window_seconds" bigint,
	"max_concurrent_tasks" bigint,
	"created_at" bigint NOT NULL,
	"revoked_at" bigint,
	"last_used_at" bigint
);
--> statement-breakpoint
CREATE TABLE "callback_deliveries" (
	"id" text PRIMARY KEY NOT NULL,
	"task_id" text NOT NULL,
	"account_id" text NOT NULL,
	"url" text NOT NULL,
	"attempt" bigint NOT NULL,
	"state" text NOT NULL,
	"status_code" bigint,
	"error" text,
	"duration_ms" bigint,
	"created_at" bigint NOT NULL,
	"next_attempt_at" bigint
);
--> statement-breakpoint
CREATE TABLE "entries" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"hold_id" text,
	"kind" text NOT NULL,
	"amount" bigint NOT NULL,
	"reason" text,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "holds" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"amount" bigint NOT NULL,
	"status" text NOT NULL,
	"settled" bigint,
	"overrun" bigint,
	"kind" text NOT NULL,
	"ref" text,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	"finalized_at" bigint
);
--> statement-breakpoint
CREATE TABLE "result_files" (
	"id" text PRIMARY KEY NOT NULL,
	"task_id" text NOT NULL,
	"account_id" text NOT NULL,
	"storage_key" text NOT NULL,
	"content_type" text NOT NULL,
	"bytes" bigint NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	"deleted_at" bigint
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"csrf_token" text NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tasks" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"key_id" text NOT NULL,
	"model" text NOT NULL,
	"state" text NOT NULL,
	"param" text NOT NULL,
	"input" text NOT NULL,
	"callback_url" text,
	"hold_id" text,
	"estimate" bigint NOT NULL,
	"cost" bigint,
	"route_index" bigint NOT NULL,
	"provider" text,
	"upstream_ref" text,
	"result_json" text,
	"fail_code" text,
	"fail_msg" text,
	"attempts" bigint NOT NULL,
	"next_poll_at" bigint NOT NULL,
	"deadline_at" bigint NOT NULL,
	"lease_owner" text,
	"lease_until" bigint,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	"completed_at" bigint,
	"results_expire_at" bigint,
	"results_expired" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "usage_records" (
	"id" text PRIMARY KEY NOT NULL,
	"request_id" text NOT NULL,
	"account_id" text NOT NULL,
	"key_id" text NOT NULL,
	"model" text NOT NULL,
	"endpoint" text NOT NULL,
	"provider" text NOT NULL,
	"status" text NOT NULL,
	"upstream_status" bigint,
	"input_tokens" bigint NOT NULL,
	"output_tokens" bigint NOT NULL,
	"cache_read_tokens" bigint NOT NULL,
	"cache_write_tokens" bigint NOT NULL,
	"cost" bigint NOT NULL,
	"latency_ms" bigint,
	"ttfb_ms" bigint,
	"error" text,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"email" text NOT NULL,
	"password_hash" text NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "wallets" (
	"account_id" text PRIMARY KEY NOT NULL,
	"balance" bigint NOT NULL,
	"held" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_hash" ON "api_keys" USING btree ("key_hash");--> statement-breakpoint
CREATE INDEX "api_keys_account" ON "api_keys" USING btree ("account_id");--> statement-breakpoint
CREATE INDEX "callbacks_task" ON "callback_deliveries" USING btree ("task_id");--> statement-breakpoint
CREATE INDEX "callbacks_due" ON "callback_deliveries" USING btree ("state","next_attempt_at");--> statement-breakpoint
CREATE INDEX "entries_account" ON "entries" USING btree ("account_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "entries_hold" ON "entries" USING btree ("hold_id");--> statement-breakpoint
CREATE INDEX "holds_pending" ON "holds" USING btree ("status","expires_at");--> statement-breakpoint
CREATE INDEX "holds_account" ON "holds" USING btree ("account_id","status");--> statement-breakpoint
CREATE INDEX "result_files_task" ON "result_files" USING btree ("task_id");--> statement-breakpoint
CREATE INDEX "result_files_expiry" ON "result_files" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "tasks_due" ON "tasks" USING btree ("state","next_poll_at");--> statement-breakpoint
CREATE INDEX "tasks_account" ON "tasks" USING btree ("account_id","created_at");--> statement-breakpoint
CREATE INDEX "usage_account_time" ON "usage_records" USING btree ("account_id","created_at");--> statement-breakpoint
CREATE INDEX "usage_request" ON "usage_records" USING btree ("request_id");--> statement-breakpoint
CREATE UNIQUE INDEX "users_email" ON "users" USING btree ("email");