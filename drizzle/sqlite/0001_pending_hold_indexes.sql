DROP INDEX `holds_pending`;--> statement-breakpoint
DROP INDEX `holds_account`;--> statement-breakpoint
CREATE INDEX `holds_pending` ON `holds` (`expires_at`) WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX `holds_account` ON `holds` (`account_id`) WHERE status = 'pending';