"""Rendering primitives every document shares, below the studies: the metric number
format, highlight segments, the Markdown-table helper, the HTML toolkit, shared text."""
