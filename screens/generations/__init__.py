"""The generations of a run: the paged list, one generation with its evidence, a case."""
