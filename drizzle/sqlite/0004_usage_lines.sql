ALTER TABLE `usage_records` ADD `held` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_records` ADD `entry_id` text;