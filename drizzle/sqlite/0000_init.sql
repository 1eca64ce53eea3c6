CREATE TABLE `accounts` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`webhook_secret` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`name` text NOT NULL,
	`prefix` text NOT NULL,
	`key_hash` text NOT NULL,
	`rate_requests` integer,
	`rate_window_seconds` integer,
	`max_concurrent_tasks` integer,
	`created_at` integer NOT NULL,
	`revoked_at` integer,
	`last_used_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_hash` ON `api_keys` (`key_hash`);--> statement-breakpoint
CREATE INDEX `api_keys_account` ON `api_keys` (`account_id`);--> statement-breakpoint
CREATE TABLE `callback_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`task_id` text NOT NULL,
	`account_id` text NOT NULL,
	`url` text NOT NULL,
	`attempt` integer NOT NULL,
	`state` text NOT NULL,
	`status_code` integer,
	`error` text,
	`duration_ms` integer,
	`created_at` integer NOT NULL,
	`next_attempt_at` integer
);
--> statement-breakpoint
CREATE INDEX `callbacks_task` ON `callback_deliveries` (`task_id`);--> statement-breakpoint
CREATE INDEX `callbacks_due` ON `callback_deliveries` (`state`,`next_attempt_at`);--> statement-breakpoint
CREATE TABLE `entries` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`hold_id` text,
	`kind` text NOT NULL,
	`amount` integer NOT NULL,
	`reason` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `entries_account` ON `entries` (`account_id`,`created_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `entries_hold` ON `entries` (`hold_id`);--> statement-breakpoint
CREATE TABLE `holds` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`amount` integer NOT NULL,
	`status` text NOT NULL,
	`settled` integer,
	`overrun` integer,
	`kind` text NOT NULL,
	`ref` text,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`finalized_at` integer
);
--> statement-breakpoint
CREATE INDEX `holds_pending` ON `holds` (`status`,`expires_at`);--> statement-breakpoint
CREATE INDEX `holds_account` ON `holds` (`account_id`,`status`);--> statement-breakpoint
CREATE TABLE `result_files` (
	`id` text PRIMARY KEY NOT NULL,
	`task_id` text NOT NULL,
	`account_id` text NOT NULL,
	`storage_key` text NOT NULL,
	`content_type` text NOT NULL,
	`bytes` integer NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`deleted_at` integer
);
--> statement-breakpoint
CREATE INDEX `result_files_task` ON `result_files` (`task_id`);--> statement-breakpoint
CREATE INDEX `result_files_expiry` ON `result_files` (`expires_at`);--> statement-breakpoint
CREATE TABLE `sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`csrf_token` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `tasks` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`key_id` text NOT NULL,
	`model` text NOT NULL,
	`state` text NOT NULL,
	`param` text NOT NULL,
	`input` text NOT NULL,
	`callback_url` text,
	`hold_id` text,
	`estimate` integer NOT NULL,
	`cost` integer,
	`route_index` integer NOT NULL,
	`provider` text,
	`upstream_ref` text,
	`result_json` text,
	`fail_code` text,
	`fail_msg` text,
	`attempts` integer NOT NULL,
	`next_poll_at` integer NOT NULL,
	`deadline_at` integer NOT NULL,
	`lease_owner` text,
	`lease_until` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`completed_at` integer,
	`results_expire_at` integer,
	`results_expired` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `tasks_due` ON `tasks` (`state`,`next_poll_at`);--> statement-breakpoint
CREATE INDEX `tasks_account` ON `tasks` (`account_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `usage_records` (
	`id` text PRIMARY KEY NOT NULL,
	`request_id` text NOT NULL,
	`account_id` text NOT NULL,
	`key_id` text NOT NULL,
	`model` text NOT NULL,
	`endpoint` text NOT NULL,
	`provider` text NOT NULL,
	`status` text NOT NULL,
	`upstream_status` integer,
	`input_tokens` integer NOT NULL,
	`output_tokens` integer NOT NULL,
	`cache_read_tokens` integer NOT NULL,
	`cache_write_tokens` integer NOT NULL,
	`cost` integer NOT NULL,
	`latency_ms` integer,
	`ttfb_ms` integer,
	`error` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `usage_account_time` ON `usage_records` (`account_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `usage_request` ON `usage_records` (`request_id`);--> statement-breakpoint
CREATE TABLE `users` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`email` text NOT NULL,
	`password_hash` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_email` ON `users` (`email`);--> statement-breakpoint
CREATE TABLE `wallets` (
	`account_id` text PRIMARY KEY NOT NULL,
	`balance` integer NOT NULL,
	`held` integer NOT NULL,
	`updated_at` integer NOT NULL
);
