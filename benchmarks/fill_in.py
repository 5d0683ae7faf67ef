"""Benchmark: offline fill-in suggestions (`testaug suggest`), speed and recall.

Twenty masked sentences are built from the bundled suites' templates: the first
template using a lexicon gets `{mask}` in that slot (its option kept, e.g. `{a:mask}`),
the other slots take their lexicon's first word. The lexicon's words are the gold.
The gold lexicon, and every lexicon sharing a word with it, is HELD OUT of the
candidates (otherwise the suite's own lexicon would hand the gold over); the
candidates are WordNet lemmas of the POS (with inflections), the other lexicons, the
LM's likeliest next words and its list continuation.

recall@k = |top-k ∩ gold| / min(|gold|, k) (a lexicon longer than k can still reach 1);
"gold share" divides by |gold| instead. Seconds per sentence exclude the model load.

Run: python benchmarks/fill_in.py [--threads 2] [--limit 20] [--no-continue]
"""

# ruff: noqa: E402  (imports follow the sys.path fix below)
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

# benchmarks/rankers.py is named like the `rankers` package: drop this folder from the path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import torch
from rich.console import Console
from rich.table import Table

from testaug.core.bundled import resolve_suite
from testaug.core.settings import Settings
from testaug.editor.scorer import LMScorer
from testaug.steps.suggest import SuggestRequest, run_suggest
from testaug.suites.load import load_suite
from testaug.suites.templates import Slot, parse

# (suite, lexicon, POS): twenty single-slot targets across the three bundled suites.
TARGETS = (
    ("sentiment", "pos_adj", "ADJ"),
    ("sentiment", "neg_adj", "ADJ"),
    ("sentiment", "pos_verb", "VERB"),
    ("sentiment", "neg_verb", "VERB"),
    ("sentiment", "pos_verb_past", "VERB"),
    ("sentiment", "air_thing", "NOUN"),
    ("sentiment", "air_person", "NOUN"),
    ("sentiment", "person_pos_adj", "ADJ"),
    ("sentiment", "nationality", "ADJ"),
    ("sentiment", "color", "ADJ"),
    ("nli", "profession", "NOUN"),
    ("nli", "instrument", "NOUN"),
    ("nli", "fruit", "NOUN"),
    ("nli", "vehicle", "NOUN"),
    ("nli", "container", "NOUN"),
    ("nli", "bird", "NOUN"),
    ("nli", "subject", "NOUN"),
    ("paraphrase", "animal_pl", "NOUN"),
    ("paraphrase", "trait_adj", "ADJ"),
    ("paraphrase", "pet_animal", "NOUN"),
)


def masked_sentence(suite_name: str, lexicon: str) -> tuple[str, list[str], list[str]]:
    """A template with `{mask}` in the lexicon's slot, the gold words, the held-out lexicons."""
    suite = load_suite(resolve_suite(suite_name))
    words = suite.words()
    gold = list(words[lexicon])
    held_out = [name for name, ws in words.items() if set(ws) & set(gold)]
    for description in suite.descriptions():
        for template in description.templates:
            for text in (template.text, template.text_pair):
                parts = parse(text) if text else ()
                if not any(isinstance(p, Slot) and p.lexicon == lexicon for p in parts):
                    continue
                out, masked = [], False
                for part in parts:
                    if isinstance(part, str):
                        out.append(part.replace("{", "{{").replace("}", "}}"))
                    elif part.lexicon == lexicon and not masked:
                        out.append("{" + (f"{part.option}:" if part.option else "") + "mask}")
                        masked = True
                    else:
                        out.append(
                            "{" + (f"{part.option}:" if part.option else "") + part.tag + "}"
                        )
                return "".join(out), gold, held_out
    raise SystemExit(f"no template of {suite_name} uses {{{lexicon}}}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--limit", type=int, default=len(TARGETS))
    parser.add_argument("--no-continue", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    console = Console()
    settings = Settings()
    start = time.perf_counter()
    scorer = LMScorer.load(settings.cache_dir, threads=args.threads)
    load_seconds = time.perf_counter() - start

    table = Table(title="fill-in: top-30 offline suggestions, gold lexicon held out")
    for column in ("suite", "masked sentence", "gold", "r@10", "r@30", "gold share", "s"):
        table.add_column(
            column, justify="left" if column in ("suite", "masked sentence") else "right"
        )
    r10s, r30s, shares, seconds = [], [], [], []
    for suite_name, lexicon, pos in TARGETS[: args.limit]:
        text, gold, held_out = masked_sentence(suite_name, lexicon)
        request = SuggestRequest(
            text=text,
            pos=pos,
            n=30,
            suite=suite_name,
            exclude_lexicons=tuple(held_out),
            continue_list=not args.no_continue,
        )
        result = run_suggest(request, cache_dir=settings.cache_dir, scorer=scorer)
        words = [s.word.lower() for s in result.suggestions]
        gold_set = {g.lower() for g in gold}
        hits10 = len(set(words[:10]) & gold_set)
        hits30 = len(set(words[:30]) & gold_set)
        r10s.append(hits10 / min(len(gold_set), 10))
        r30s.append(hits30 / min(len(gold_set), 30))
        shares.append(hits30 / len(gold_set))
        seconds.append(result.seconds)
        table.add_row(
            f"{suite_name}:{lexicon}", text, str(len(gold_set)), f"{r10s[-1]:.2f}",
            f"{r30s[-1]:.2f}", f"{shares[-1]:.2f}", f"{result.seconds:.1f}",
        )  # fmt: skip
    table.add_row(
        "mean", "", "", f"{statistics.mean(r10s):.2f}", f"{statistics.mean(r30s):.2f}",
        f"{statistics.mean(shares):.2f}", f"{statistics.median(seconds):.1f} (median)",
    )  # fmt: skip
    console.print(table)
    console.print(
        f"model load {load_seconds:.1f} s; torch threads {torch.get_num_threads()}; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
        f"list continuation {'off' if args.no_continue else 'on'}",
        highlight=False,
    )


if __name__ == "__main__":
    main()
