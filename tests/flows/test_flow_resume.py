"""A flow killed halfway through generation, started again: it resumes without sending
any request that was answered before (counted by our LLM server on 127.0.0.1)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from testaug.core.jsonl import read_jsonl
from testaug.core.records import Candidate, Prompt
from testaug.review.label_studio_server import free_port
from testaug.testing.openai_server import ScriptedOpenAIServer
from tests.cli_runner import HANG_TIMEOUT
from tests.flow_helpers import echo_seed_reply, prefect_env

pytestmark = pytest.mark.slow

AUGMENT = """
import sys
from flows.augment import augment
from testaug.generation.backend_config import BackendConfig
from testaug.steps.config import RunConfig
run_dir, base_url, rankers = sys.argv[1:4]
result = augment(RunConfig(
    run_dir=run_dir, size="small", rankers=rankers, capabilities=["Negation", "Temporal"],
    generator=BackendConfig(kind="openai", base_url=base_url, model="scripted"),
))
print("candidates", result.candidates.records)
"""


class StallAfter:
    """A reply script that answers the first `answer` prompts, then holds every other
    request until released: the flow is then halfway through generation."""

    def __init__(self, answer: int) -> None:
        self.answer = answer
        self.answered: list[str] = []
        self.stalled = threading.Event()
        self.release = threading.Event()
        self._lock = threading.Lock()
        self.stalling = True

    def __call__(self, prompt: str, index: int) -> str:
        with self._lock:
            known = prompt in self.answered
            if not known and (len(self.answered) < self.answer or not self.stalling):
                self.answered.append(prompt)
                known = True
        if not known:
            self.stalled.set()
            self.release.wait(timeout=HANG_TIMEOUT)
        return echo_seed_reply(prompt, index)


def start_augment(tmp_path: Path, base_url: str, rankers: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", AUGMENT, str(tmp_path / "run"), base_url, str(rankers)],
        env=prefect_env(tmp_path / "prefect", tmp_path / "cache"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def wait_for_cached(path: Path, count: int, timeout: float = HANG_TIMEOUT) -> None:
    """Wait until the response cache at `path` holds `count` completions (a condition, not
    a fixed sleep: a loaded machine only takes longer)."""
    import sqlite3

    deadline = time.monotonic() + timeout
    while True:
        stored = 0
        if path.exists():
            try:
                with sqlite3.connect(path, timeout=5) as db:
                    stored = db.execute("SELECT COUNT(*) FROM completions").fetchone()[0]
            except sqlite3.Error:
                stored = 0
        if stored >= count:
            return
        assert time.monotonic() < deadline, f"{stored} of {count} completions cached"
        time.sleep(0.1)


def test_a_flow_killed_during_generation_resumes_without_asking_the_llm_twice(
    tmp_path, lexical_rankers
):
    script = StallAfter(answer=4)
    with ScriptedOpenAIServer(script, port=free_port()) as server:
        first = start_augment(tmp_path, server.base_url, lexical_rankers)
        assert script.stalled.wait(timeout=HANG_TIMEOUT), first.communicate()[0][-3000:]
        answered = set(script.answered)
        samples = sum(
            int(r.body.get("n") or 1)
            for r in server.requests
            if r.status == 200 and r.body.get("prompt") in answered
        )
        wait_for_cached(tmp_path / "cache" / "responses.sqlite", samples)  # all of them stored
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(timeout=HANG_TIMEOUT)
        answered_before = list(script.answered)
        requests_before = server.request_count
        script.stalling = False
        script.release.set()
        assert not (tmp_path / "run" / "candidates.jsonl").exists()

        second = start_augment(tmp_path, server.base_url, lexical_rankers)
        output, _ = second.communicate(timeout=HANG_TIMEOUT)
        assert second.returncode == 0, output[-3000:]

        prompts = [r.body.get("prompt") for r in server.requests]
    asked = Counter(prompts)
    assert len(answered_before) == 4 and requests_before >= 4
    assert all(asked[prompt] == 1 for prompt in answered_before)
    run_prompts = [
        p.text
        for part in sorted((tmp_path / "run" / "generated").glob("*.prompts.jsonl"))
        for p in read_jsonl(part, Prompt)
    ]
    # Every prompt of the run was asked; only those held unanswered at the kill twice.
    assert set(asked) == set(run_prompts)
    assert all(prompt not in answered_before for prompt, n in asked.items() if n > 1)
    assert list(read_jsonl(tmp_path / "run" / "candidates.jsonl", Candidate))
