"""Case dossiers: the record gathered from the store (build), rendered as HTML or Markdown."""
