"""What every run shares, below the studies: the lifecycle (ownership, create or resume,
status, failure, cancel), model loading, progress events, the request's model fields and
the launch plan's configuration conflicts."""
