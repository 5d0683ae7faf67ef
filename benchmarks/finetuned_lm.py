# ruff: noqa: E402  (imports follow the sys.path fix below)
"""What fine-tuning the embedded language model as a group's classifier gives (a GPU lever).

The language-model learner (rankers/adaptation/lm_states.py) is a logistic regression on frozen
hidden states of SmolLM2-135M's middle layer. This benchmark measures the next step, which
2 cores cannot afford: the same layers fine-tuned end to end on one held-out generator's
labels, on the same random label samples and in-domain split as benchmarks/stacking.py.

Three steps, so the GPU side needs neither testaug nor a model download:

- `pack` (here, testaug installed): the held-out sources' prompts as token ids, their
  labels and splits, and SmolLM2-135M cut to its first 15 layers (the middle layer the
  learner reads) with its vocabulary cut to the tokens the prompts use, quantized to 4 bits
  in groups of 32 as its GGUF file is (about 40 MB, so it travels to a GPU machine).
- `train` (anywhere with torch, transformers and scikit-learn): for each split, the frozen
  learner (a logistic regression on the mean states, as rankers/adaptation/lm_states.py) and the cut
  model fine-tuned end to end (mean-pooled states, a linear head, BCE), each scoring the
  candidates it did not see; writes scores.json.
- `report` (here): the gap closed at 90% accuracy on the rest of the source, mean ±
  standard error over the draws; compare with the stacking table in benchmarks/README.md.

Run: python benchmarks/finetuned_lm.py pack --out .finetune
     python benchmarks/finetuned_lm.py train --pack .finetune --out DIR   (on a GPU)
     python benchmarks/finetuned_lm.py report --pack .finetune --scores DIR/scores.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

# benchmarks/rankers.py is named like the `rankers` package: drop this folder from the path.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import numpy as np

GROUP = 32  # quantization group along a weight's input dimension (its width if narrower)
FROZEN, FINE_TUNED = "frozen states + logistic regression", "fine-tuned end to end"


def quantize(weight: np.ndarray) -> dict[str, np.ndarray]:
    """4-bit codes (two a byte) with a float16 scale and minimum per group of 32 inputs."""
    rows, cols = weight.shape
    width = GROUP if cols % GROUP == 0 else cols
    groups = weight.reshape(rows, cols // width, width)
    low, high = groups.min(-1, keepdims=True), groups.max(-1, keepdims=True)
    scale = np.maximum(high - low, 1e-8) / 15
    codes = np.clip(np.rint((groups - low) / scale), 0, 15).astype(np.uint8).reshape(rows, -1)
    return {
        "codes": codes[:, 0::2] | (codes[:, 1::2] << 4),
        "scale": scale.astype(np.float16),
        "low": low.astype(np.float16),
    }


def dequantize(codes: np.ndarray, scale: np.ndarray, low: np.ndarray) -> np.ndarray:
    rows = codes.shape[0]
    unpacked = np.empty((rows, codes.shape[1] * 2), dtype=np.uint8)
    unpacked[:, 0::2], unpacked[:, 1::2] = codes & 15, codes >> 4
    groups = unpacked.reshape(rows, scale.shape[1], -1).astype(np.float32)
    return (groups * scale.astype(np.float32) + low.astype(np.float32)).reshape(rows, -1)


def pack(args: argparse.Namespace) -> int:
    """Write the prompts, labels, splits and the cut, quantized model into `args.out`."""
    from rankers.adaptation.lm_states import LmLearnerConfig, lm_prompt, read_layer
    from rankers.adaptation.transfer import source_of
    from testaug.core.settings import Settings
    from testaug.generation.backends.embedded_models import DEFAULT_MODEL
    from testaug.generation.backends.local import LocalBackend

    sys.path.append(str(_HERE))
    try:  # the same data, draws and in-domain split as benchmarks/stacking.py
        from stacking import in_domain_split, random_split, read_validity
    finally:
        sys.path[:] = [p for p in sys.path if p != str(_HERE)]

    items, test_ids = read_validity(args.data)
    learner = LmLearnerConfig(model=args.model or DEFAULT_MODEL, layer=args.layers)
    model, tokenizer = LocalBackend(learner.model, cache_dir=Settings().cache_dir).loaded()
    layers = read_layer(learner, model.config.num_hidden_layers)  # the learner's layer

    prompts, invalid, runs = [], [], []
    for source in args.sources:
        held = [item for item in items if source_of(item) == source]
        start = len(prompts)
        prompts += [lm_prompt(item.candidate) for item in held]
        invalid += [not item.valid for item in held]
        splits = [
            (str(n), s, random_split(len(held), n, s))
            for n in args.sizes
            for s in range(args.seeds)
        ]
        splits.append(("in domain", 0, in_domain_split(held, test_ids)))
        for row, seed, (drawn, left) in splits:
            runs.append(
                {
                    "source": source,
                    "row": row,
                    "seed": seed,
                    "drawn": (drawn + start).tolist(),
                    "left": (left + start).tolist(),
                }
            )
    ids = [tokenizer(p)["input_ids"] for p in prompts]
    used = np.unique(np.concatenate([np.asarray(i) for i in ids]))
    remap = {int(t): k for k, t in enumerate(used)}

    state = model.state_dict()
    embed = state["model.embed_tokens.weight"].detach().float().numpy()[used]
    arrays: dict[str, np.ndarray] = {"embed": embed.astype(np.float16)}
    for name, tensor in state.items():
        parts = name.split(".")
        if parts[:2] != ["model", "layers"] or int(parts[2]) >= layers:
            continue
        value = tensor.detach().float().numpy()
        if value.ndim == 2:
            for key, part in quantize(value).items():
                arrays[f"{name}|{key}"] = part
        else:
            arrays[name] = value
    config = model.config.to_dict()
    config.update(num_hidden_layers=layers, vocab_size=len(used) + 1, pad_token_id=len(used))
    config.pop("layer_types", None)

    args.out.mkdir(parents=True, exist_ok=True)
    np.savez(args.out / "model.npz", **arrays)
    lengths = np.array([len(i) for i in ids])
    np.savez(
        args.out / "data.npz",
        ids=np.array([remap[t] for i in ids for t in i], dtype=np.int32),
        offsets=np.concatenate([[0], np.cumsum(lengths)]),
        invalid=np.array(invalid),
    )
    (args.out / "runs.json").write_text(json.dumps({"config": config, "runs": runs}))
    size = sum(f.stat().st_size for f in args.out.iterdir()) / 2**20
    print(f"{len(prompts)} prompts, {len(used)} tokens, {len(runs)} splits: {size:.1f} MiB")
    return 0


def train(args: argparse.Namespace) -> int:
    """Score each split's left-out candidates by the frozen and the fine-tuned learner."""
    import torch
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler
    from transformers import LlamaConfig, LlamaModel

    meta = json.loads((args.pack / "runs.json").read_text())
    data = np.load(args.pack / "data.npz")
    offsets, flat = data["offsets"], data["ids"]
    invalid = data["invalid"].astype(np.float32)
    config = LlamaConfig.from_dict(meta["config"])
    pad = config.pad_token_id
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    packed = np.load(args.pack / "model.npz")
    weights: dict[str, torch.Tensor] = {}
    for key in packed.files:
        if key.endswith("|codes"):
            name = key[: -len("|codes")]
            matrix = dequantize(packed[key], packed[f"{name}|scale"], packed[f"{name}|low"])
            weights[name.removeprefix("model.")] = torch.from_numpy(matrix)
        elif "|" not in key and key != "embed":
            weights[key.removeprefix("model.")] = torch.from_numpy(packed[key])
    embed = torch.from_numpy(packed["embed"].astype(np.float32))
    weights["embed_tokens.weight"] = torch.cat([embed, torch.zeros(1, embed.shape[1])])

    def batch(indices: Sequence[int]) -> tuple[torch.Tensor, torch.Tensor]:
        rows = [flat[offsets[i] : offsets[i + 1]] for i in indices]
        width = max(len(r) for r in rows)
        ids = torch.full((len(rows), width), pad, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for k, row in enumerate(rows):
            ids[k, : len(row)], mask[k, : len(row)] = torch.from_numpy(row.astype(np.int64)), 1
        return ids.to(device), mask.to(device)

    def pooled(base: LlamaModel, indices: Sequence[int]) -> torch.Tensor:
        ids, mask = batch(indices)
        hidden = base(input_ids=ids, attention_mask=mask, output_hidden_states=True)
        # The cut model's last layer, before the final norm, as the learner reads it.
        states = hidden.hidden_states[config.num_hidden_layers].float()
        weight = mask.unsqueeze(-1).float()
        return (states * weight).sum(1) / weight.sum(1)

    def fresh() -> LlamaModel:
        base = LlamaModel(config)
        missing, unexpected = base.load_state_dict(weights, strict=False)
        assert not unexpected and set(missing) <= {"norm.weight"}, (missing, unexpected)
        return base.to(device)

    def scored(base: LlamaModel, head: Callable | None, indices: np.ndarray) -> np.ndarray:
        base.eval()
        out = []
        with torch.no_grad(), torch.autocast(device.type, dtype=torch.bfloat16):
            for start in range(0, len(indices), 64):
                states = pooled(base, indices[start : start + 64])
                out.append((head(states) if head else states).float().cpu().numpy())
        return np.concatenate(out)

    frozen_base = fresh()
    every = np.arange(len(invalid))
    states = scored(frozen_base, None, every)
    del frozen_base
    target = torch.from_numpy(invalid).to(device)

    def fine_tuned(seed: int, drawn: np.ndarray, left: np.ndarray, probe, scaler) -> np.ndarray:
        """Linear probe, then fine-tune: the head starts as the frozen learner (its scaling
        kept fixed), so the fine-tuning starts from that learner's ranking."""
        torch.manual_seed(seed)
        base, head = fresh(), torch.nn.Linear(config.hidden_size, 1).to(device)
        with torch.no_grad():
            head.weight.copy_(torch.from_numpy(probe.coef_).float())
            head.bias.copy_(torch.from_numpy(probe.intercept_).float())
        mean = torch.from_numpy(scaler.mean_).float().to(device)
        spread = torch.from_numpy(scaler.scale_).float().to(device)

        def classify(states: torch.Tensor) -> torch.Tensor:
            return head((states.float() - mean) / spread).squeeze(-1)

        epochs = min(10, max(3, round(args.passes / len(drawn))))
        steps = epochs * math.ceil(len(drawn) / args.batch_size)
        warmup = max(1, steps // 10)
        parameters = [*base.parameters(), *head.parameters()]
        optimizer = torch.optim.AdamW(parameters, lr=args.lr, weight_decay=0.01)
        schedule = torch.optim.lr_scheduler.LambdaLR(
            optimizer, lambda s: min((s + 1) / warmup, max(0.0, (steps - s) / (steps - warmup)))
        )
        generator = np.random.default_rng(seed)
        base.train()
        for _ in range(epochs):
            order = generator.permutation(drawn)
            for start in range(0, len(order), args.batch_size):
                chunk = order[start : start + args.batch_size]
                with torch.autocast(device.type, dtype=torch.bfloat16):
                    logits = classify(pooled(base, chunk))
                loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, target[chunk])
                loss.backward()
                torch.nn.utils.clip_grad_norm_(parameters, 1.0)
                optimizer.step()
                schedule.step()
                optimizer.zero_grad()
        return scored(base, classify, left)

    results = []
    args.out.mkdir(parents=True, exist_ok=True)
    for number, run in enumerate(meta["runs"][: args.limit]):
        drawn, left = np.array(run["drawn"]), np.array(run["left"])
        began = time.perf_counter()
        scaler = StandardScaler().fit(states[drawn])
        probe = LogisticRegression(C=0.1, max_iter=2000)
        probe.fit(scaler.transform(states[drawn]), invalid[drawn])
        frozen = probe.decision_function(scaler.transform(states[left]))
        tuned = fine_tuned(run["seed"], drawn, left, probe, scaler)
        print(
            f"{number + 1}/{len(meta['runs'])} {run['source']} {run['row']} seed {run['seed']}:"
            f" {len(drawn)} labels, {time.perf_counter() - began:.1f} s",
            flush=True,
        )
        scores = {FROZEN: frozen.tolist(), FINE_TUNED: tuned.tolist()}
        results.append({**{k: run[k] for k in ("source", "row", "seed")}, **scores})
        (args.out / "scores.json").write_text(json.dumps(results))  # a cut-off run keeps these
    return 0


def report(args: argparse.Namespace) -> int:
    """Print the gap each learner closes on each split's left-out candidates."""
    from rich.console import Console
    from rich.table import Table

    from rankers.evaluation.triage import triage_report

    runs = {
        (r["source"], r["row"], r["seed"]): r
        for r in json.loads((args.pack / "runs.json").read_text())["runs"]
    }
    invalid = np.load(args.pack / "data.npz")["invalid"].astype(bool)
    gaps: dict[tuple[str, str, str], list[float]] = {}
    for result in json.loads(args.scores.read_text()):
        run = runs[(result["source"], result["row"], result["seed"])]
        left = invalid[np.array(run["left"])]
        for learner in (FROZEN, FINE_TUNED):
            order = np.argsort(-np.asarray(result[learner]), kind="stable")
            key = (result["source"], f"{result['row']} ({len(run['drawn'])})", learner)
            gaps.setdefault(key, []).append(triage_report(left[order], 0.9).gap_closed)
    table = Table(
        title="gap closed at 90% accuracy on the rest of a held-out source, by a learner "
        "trained on its labels alone (mean ± standard error over the draws)",
        title_justify="left",
    )
    for column in ("held out", "labels", FROZEN, FINE_TUNED):
        table.add_column(column, justify="left" if column == "held out" else "right")
    rows = sorted(
        {k[:2] for k in gaps}, key=lambda k: (k[0], k[1].startswith("in"), len(k[1]), k[1])
    )
    for source, labels in rows:
        cells = []
        for learner in (FROZEN, FINE_TUNED):
            values = np.array(gaps[(source, labels, learner)])
            error = values.std(ddof=1) / math.sqrt(len(values)) if len(values) > 1 else 0.0
            cells.append(
                f"{values.mean():.1%} ± {error:.1%}" if len(values) > 1 else f"{values.mean():.1%}"
            )
        table.add_row(source, labels, *cells)
    Console().print(table)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    packing = commands.add_parser("pack", help="write prompts, splits and the cut model")
    packing.add_argument(
        "--data", type=Path, default=None, help="default: the bundled validity data"
    )
    packing.add_argument(
        "--sources", nargs="+", default=["strong-style (hand-written)", "gemma-3-270m"]
    )
    packing.add_argument("--sizes", nargs="+", type=int, default=[100, 200])
    packing.add_argument("--seeds", type=int, default=5, help="random label samples per size")
    packing.add_argument("--model", help="an embedded name, .gguf or folder (default: SmolLM2)")
    packing.add_argument("--layers", type=int, help="the layers kept (default: half the model's)")
    packing.add_argument("--out", type=Path, required=True)
    training = commands.add_parser("train", help="score each split by both learners")
    training.add_argument("--pack", type=Path, required=True)
    training.add_argument("--out", type=Path, required=True)
    training.add_argument("--lr", type=float, default=2e-5)
    training.add_argument("--batch-size", type=int, default=16)
    training.add_argument(
        "--passes", type=int, default=2000, help="examples seen per run (3 to 10 epochs)"
    )
    training.add_argument("--limit", type=int, help="the first n splits only (a smoke test)")
    reporting = commands.add_parser("report", help="print the gap closed")
    reporting.add_argument("--pack", type=Path, required=True)
    reporting.add_argument("--scores", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.command == "pack" and args.data is None:
        from testaug.core.bundled import bundled_dir

        args.data = bundled_dir("data") / "validity"
    return {"pack": pack, "train": train, "report": report}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
