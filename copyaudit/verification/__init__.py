"""Judges verified against people: label files, agreement, bootstrap statistics, ROC."""
