"""Review of generated candidates: annotation plans and acceptance under a stated precision,
verdicts and agreement, the terminal annotator and the Label Studio client and server."""
