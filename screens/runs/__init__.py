"""Runs: the dashboard, the run launcher and run control."""
