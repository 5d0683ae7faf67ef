"""The fill-in scorer: a causal LM's log-probability of sentences and of next words.

It wraps the model and tokenizer of the embedded local backend (SmolLM2 by default),
loaded once. `sentence_logprobs` scores filled sentences in padded batches;
`next_token_logprobs` gives the distribution over the token after each prefix, which
ranks thousands of candidate words by their first token in one forward pass before the
few best are scored whole.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

    from testaug.generation.backends.local import LocalBackend

logger = logging.getLogger(__name__)

BATCH_SIZE = 32


class LMScorer:
    """Log-probabilities from a causal LM on the CPU (no gradients, one model per process)."""

    def __init__(self, model: Any, tokenizer: Any, *, backend: LocalBackend | None = None) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.backend = backend  # kept for list continuation (`complete`)
        ids = [
            tokenizer.convert_tokens_to_ids("<|endoftext|>"),
            tokenizer.bos_token_id,
            tokenizer.eos_token_id,
        ]
        # Raw text starts after a document separator, as in pre-training.
        self.start_id: int = next(
            i for i in ids if isinstance(i, int) and i != tokenizer.unk_token_id
        )
        self.pad_id: int = tokenizer.eos_token_id or self.start_id
        self._first_tokens: dict[str, int] = {}

    @classmethod
    def load(
        cls, cache_dir: Path, *, model: str | Path | None = None, threads: int | None = None
    ) -> LMScorer:
        """The scorer over the local backend's model (default: the embedded SmolLM2)."""
        from testaug.generation.backends.local import LocalBackend

        backend = LocalBackend(model, cache_dir=cache_dir, threads=threads)
        start = time.perf_counter()
        causal_lm, tokenizer = backend.loaded()
        logger.info("fill-in scorer loaded in %.1f s", time.perf_counter() - start)
        return cls(causal_lm, tokenizer, backend=backend)

    def _encode(self, texts: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor]:
        """Token ids (start token first, right-padded) and the attention mask."""
        import torch

        rows = self._token_ids(list(texts))
        width = 1 + max(len(row) for row in rows)
        ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, row in enumerate(rows):
            ids[i, : 1 + len(row)] = torch.tensor([self.start_id, *row])
            mask[i, : 1 + len(row)] = 1
        return ids, mask

    def sentence_logprobs(self, texts: Sequence[str], batch_size: int = BATCH_SIZE) -> list[float]:
        """The log-probability of each text (summed over its tokens), batched by length."""
        rows = [[self.start_id, *row] for row in self._token_ids(list(texts))]
        order = sorted(range(len(rows)), key=lambda i: len(rows[i]))
        scores = [0.0] * len(rows)
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            totals = self._batch_logprobs([rows[i] for i in chunk])
            for i, total in zip(chunk, totals, strict=True):
                scores[i] = total
        return scores

    def _batch_logprobs(self, rows: Sequence[list[int]]) -> list[float]:
        """The summed log-probability of each row's tokens after the first (the start token).

        The tokens that every row starts with ("Anna is" of "Anna is a fan." and "Anna is an
        actor.") go through the model once; only the rows' own tails are batched after them
        (filled sentences share the text before the mask: half the work or more)."""
        import torch

        shared = 1
        limit = min(len(row) for row in rows) - 1  # each row keeps a token of its own
        while shared < limit and all(row[shared] == rows[0][shared] for row in rows):
            shared += 1
        tails = [row[shared:] for row in rows]
        width = max(len(tail) for tail in tails)
        ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), shared + width), dtype=torch.long)
        mask[:, :shared] = 1
        for i, tail in enumerate(tails):
            ids[i, : len(tail)] = torch.tensor(tail)
            mask[i, shared : shared + len(tail)] = 1
        with torch.inference_mode():
            head = self.model(input_ids=torch.tensor([rows[0][:shared]]), use_cache=True)
            head_logprobs = torch.log_softmax(head.logits[0].float(), dim=-1)
            known = torch.tensor(rows[0][1:shared], dtype=torch.long)
            base = head_logprobs[:-1].gather(1, known[:, None]).sum()
            cache = head.past_key_values
            cache.batch_repeat_interleave(len(rows))
            logits = self.model(input_ids=ids, attention_mask=mask, past_key_values=cache).logits
        first = head_logprobs[-1][ids[:, 0]]
        logprobs = torch.log_softmax(logits[:, :-1].float(), dim=-1)
        rest = logprobs.gather(2, ids[:, 1:, None])[..., 0] * mask[:, shared + 1 :]
        return (base + first + rest.sum(dim=1)).tolist()

    def next_token_logprobs(self, prefixes: Sequence[str]) -> torch.Tensor:
        """Per prefix, the log-probabilities of the next token (a [prefixes, vocab] tensor)."""
        import torch

        ids, mask = self._encode([p if p else "" for p in prefixes])
        with torch.inference_mode():
            logits = self.model(input_ids=ids, attention_mask=mask).logits
        last = mask.sum(dim=1) - 1
        return torch.log_softmax(logits[torch.arange(len(prefixes)), last].float(), dim=-1)

    def first_tokens(self, words: Sequence[str]) -> list[int]:
        """The id of each word's first token (words as they follow a prefix, e.g. " loved")."""
        new = [w for w in dict.fromkeys(words) if w not in self._first_tokens]
        if new:
            rows = self._token_ids(new)
            for word, row in zip(new, rows, strict=True):
                self._first_tokens[word] = row[0] if row else self.pad_id
        return [self._first_tokens[w] for w in words]

    def _token_ids(self, texts: list[str]) -> list[list[int]]:
        """Each text's token ids, no special tokens (a fast tokenizer's Rust batch directly:
        the Python wrapper costs a second per 20,000 words)."""
        backend = getattr(self.tokenizer, "backend_tokenizer", None)
        if backend is None:
            return self.tokenizer(texts, add_special_tokens=False)["input_ids"]
        return [e.ids for e in backend.encode_batch(texts, add_special_tokens=False)]

    def top_words(self, logprobs: torch.Tensor, k: int) -> list[str]:
        """The `k` likeliest next tokens that are whole alphabetic words after a space."""
        import torch

        out: list[str] = []
        values = torch.argsort(logprobs, descending=True)[: k * 8].tolist()
        for token in self.tokenizer.convert_ids_to_tokens(values):
            text = self.tokenizer.convert_tokens_to_string([token])
            if text.startswith(" ") and text[1:].isalpha() and len(text) > 2:
                out.append(text[1:])
                if len(out) >= k:
                    break
        return out
