"""What people read: run reports (Markdown, JSON, HTML), case dossiers and the safe
writing of output files."""
