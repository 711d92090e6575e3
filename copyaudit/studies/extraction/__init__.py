"""Prefix extraction (verbatim memorisation), after HELM's copyright scenario."""
