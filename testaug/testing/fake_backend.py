"""A scripted backend for unit tests: replies come from a list or a function, no model, no server."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from testaug.generation.backends import Completion, CompletionRequest, CompletionResult, Usage


class ScriptedBackend:
    """Answers each sample with `script(prompt, sample_index)`, or the next reply of a list.

    Stop sequences are applied as a server would; every request is recorded.
    """

    name = "fake"

    def __init__(
        self,
        script: Callable[[str, int], str] | Sequence[str],
        *,
        model: str = "scripted",
        continues_prompt: bool = True,
    ) -> None:
        self.model = model
        self.continues_prompt = continues_prompt
        self.requests: list[CompletionRequest] = []
        self._lock = threading.Lock()
        if callable(script):
            self._script = script
        else:
            replies = list(script)

            def next_reply(prompt: str, index: int) -> str:
                return replies.pop(0) if replies else ""

            self._script = next_reply

    def complete(self, request: CompletionRequest) -> CompletionResult:
        with self._lock:
            self.requests.append(request)
            texts = [
                self._script(request.prompt, request.sample_offset + i) for i in range(request.n)
            ]
        return CompletionResult(
            completions=tuple(_apply_stop(text, request.stop) for text in texts),
            usage=Usage(
                prompt_tokens=len(request.prompt.split()),
                completion_tokens=sum(len(text.split()) for text in texts),
            ),
        )


def _apply_stop(text: str, stop: Sequence[str]) -> Completion:
    cuts = [text.find(s) for s in stop if s and s in text]
    return Completion(text=text[: min(cuts)] if cuts else text, finish_reason="stop")
