"""testaug: grow capability-based NLP test suites.

Importing this package stays light: no torch, no prefect.
"""

__version__ = "0.1.0"
