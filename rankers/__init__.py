"""Cross-encoder rankers that score generated candidates for invalidity (torch lives here).

Filled by the validity-triage issue; nothing here yet.
"""
