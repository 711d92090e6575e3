"""Report rendering: the Markdown-table helper, the HTML toolkit and the shared text pieces."""
