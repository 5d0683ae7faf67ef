"""Log records of expected faults without their tracebacks.

Prefect logs each failed task and flow run with its traceback. For testaug's own
errors (bad input, a server that keeps failing) the message already names the
fault, so one line is enough; anything else keeps its traceback.
"""

from __future__ import annotations

import logging

from testaug.core.errors import TestAugError

RUN_LOGGERS = ("prefect.task_runs", "prefect.flow_runs")


class NoTracebackForExpectedFaults(logging.Filter):
    """Drops the traceback from a log record about a TestAugError."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], TestAugError):
            record.exc_info = None
            record.exc_text = None
        return True


def quiet_expected_faults(loggers: tuple[str, ...] = RUN_LOGGERS) -> None:
    """Install the filter on Prefect's run loggers (once)."""
    for name in loggers:
        logger = logging.getLogger(name)
        if not any(isinstance(f, NoTracebackForExpectedFaults) for f in logger.filters):
            logger.addFilter(NoTracebackForExpectedFaults())
