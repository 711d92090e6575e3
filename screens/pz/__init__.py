"""The memorisation map of a p_z run and the windows of one stretch of a work."""
