"""The run engine: the lifecycle every study's run shares, model loading for runs."""
