"""The model comparison screen (copyaudit compare in the app)."""
