"""`testaug flows list` and `flows deploy` check each schedule's cron expression and time
zone where prefect.yaml is read: a bad one is named with its file, line and field, before
any Prefect server is asked."""

from __future__ import annotations

import pytest

from flows.deployments import PREFECT_YAML, cron_problem, read_deployments
from tests.cli_runner import run_testaug

TEMPLATE = """deployments:
  - name: nightly
    entrypoint: flows/collect.py:collect
    schedules:
      - cron: "{cron}"
        timezone: {timezone}
"""


def one_line(result) -> str:
    return " ".join((result.stdout + result.stderr).split())


@pytest.mark.parametrize(
    ("cron", "timezone", "line", "field", "words"),
    [
        ("99 99 * * *", "UTC", 5, "cron", "minute '99' is not a value in 0-59"),
        ("0 3 * *", "UTC", 5, "cron", "has 4 fields"),
        ("0 2 * * *", "Mars/Olympus", 6, "timezone", "unknown time zone 'Mars/Olympus'"),
    ],
)
@pytest.mark.parametrize("command", [("list",), ("deploy", "nightly")])
def test_a_bad_schedule_is_named_with_its_line_and_field(
    tmp_path, cron, timezone, line, field, words, command
):
    path = tmp_path / "prefect.yaml"
    path.write_text(TEMPLATE.format(cron=cron, timezone=timezone))
    result = run_testaug(
        tmp_path,
        "flows",
        *command,
        "--file",
        str(path),
        env={"PREFECT_API_URL": "http://127.0.0.1:9/api"},
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr
    text = one_line(result)
    assert f"{path}:{line}" in text and field in text and words in text


@pytest.mark.parametrize(
    "cron", ["0 2 * * *", "*/15 * * * *", "0 9-17 * * mon-fri", "0 0 1,15 jan,jul *", "@daily"]
)
def test_valid_cron_expressions_are_accepted(cron):
    assert cron_problem(cron) is None


@pytest.mark.parametrize(
    "cron",
    [
        "60 * * * *",
        "* 24 * * *",
        "0 0 0 * *",
        "* * * 13 *",
        "5-1 * * * *",
        "*/0 * * * *",
        "@sometimes",
        "x y z w v",
    ],
)
def test_out_of_range_or_unknown_cron_expressions_are_refused(cron):
    assert cron_problem(cron)


def test_the_projects_deployments_still_read():
    assert read_deployments(PREFECT_YAML)
