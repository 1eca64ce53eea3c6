ALTER TABLE `holds` ADD `asked_at` integer;--> statement-breakpoint
CREATE INDEX `holds_asked` ON `holds` (`asked_at`) WHERE asked_at is not null and status = 'pending';