"""Reports of a run: Markdown and HTML documents, their tables and plots."""
