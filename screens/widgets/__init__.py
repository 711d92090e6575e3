"""Widgets and text builders shared by the screens."""
