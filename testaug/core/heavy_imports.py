"""One lock around the imports of transformers and sentence-transformers.

Their lazy modules resolve names on first use, and two threads doing that at once can
fail with "cannot import name ...": a flow loads the embedded generator in one task
while it trains the rankers in another. Every first import of them holds this lock.
"""

from __future__ import annotations

import threading

IMPORT_LOCK = threading.RLock()
