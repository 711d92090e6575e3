"""copyaudit inside other frameworks (optional extras)."""
