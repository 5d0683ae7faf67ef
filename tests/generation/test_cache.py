"""The response cache: the first answer stored for a key stays the answer, across writers."""

from __future__ import annotations

import threading

from testaug.generation.backends import Completion
from testaug.generation.cache import ResponseCache


def answers(word: str, count: int) -> dict[str, Completion]:
    return {f"key-{i}": Completion(text=f"{word} {i}") for i in range(count)}


def test_the_first_answer_stored_for_a_key_stays_the_answer(tmp_path):
    path = tmp_path / "cache.sqlite"
    first, second = ResponseCache(path), ResponseCache(path)
    first.put_many("b", "m", answers("first", 3))
    stored = second.put_many("b", "m", answers("second", 3) | answers("new", 4))
    assert [stored[f"key-{i}"].text for i in range(4)] == ["first 0", "first 1", "first 2", "new 3"]
    assert ResponseCache(path).get_many(stored) == stored


def test_concurrent_writers_of_different_answers_all_end_with_the_stored_ones(tmp_path):
    path = tmp_path / "cache.sqlite"
    words = [f"writer{n}" for n in range(4)]
    caches = [ResponseCache(path) for _ in words]
    start = threading.Barrier(len(words))
    seen: dict[str, dict[str, Completion]] = {}

    def write(cache: ResponseCache, word: str) -> None:
        start.wait()
        for offset in range(0, 200, 20):  # many small transactions, interleaved
            chunk = {
                k: c for k, c in answers(word, 200).items() if offset <= int(k[4:]) < offset + 20
            }
            seen.setdefault(word, {}).update(cache.put_many("b", "m", chunk))

    threads = [
        threading.Thread(target=write, args=pair) for pair in zip(caches, words, strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stored = ResponseCache(path).get_many(answers("any", 200))
    assert len(stored) == 200
    assert all(seen[word] == stored for word in words)


def test_a_key_the_server_echoes_in_a_completion_is_stored_masked(tmp_path):
    from testaug.generation.backends.openai_compatible import OpenAIBackend

    key = "Plain0Key-Not-Shaped"  # no key shape: only the backend knows it is one
    OpenAIBackend(model="m", api_key=key, base_url="http://127.0.0.1:9/v1")
    path = tmp_path / "cache.sqlite"
    stored = ResponseCache(path).put_many(
        "b", "m", {"k": Completion(text=f"Sure! Your key is {key}, the food was great.")}
    )
    assert stored["k"].text == "Sure! Your key is ***, the food was great."
    assert not [f for f in tmp_path.iterdir() if key.encode() in f.read_bytes()]  # WAL too
