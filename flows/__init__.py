"""Prefect flows: wiring of testaug's stage functions, no business logic.

Filled by the flows issue; nothing here yet.
"""
