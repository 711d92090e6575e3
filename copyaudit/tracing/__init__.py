"""Tracing outputs to a library of works: every maximal span of an output that occurs in
any registered text, with every place it occurs (copyaudit.tracing.index), after
OLMoTrace's question (allenai/infinigram-api) answered with a suffix array over the
library's own token stream (pydivsufsort)."""
