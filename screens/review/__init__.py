"""People's work: annotation, the review queue, agreement, work queues."""
