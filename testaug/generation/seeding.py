"""Generation prompts from seed cases: k cases per prompt, spread across a description's templates."""

from __future__ import annotations

import logging
import random
from collections.abc import Iterable
from dataclasses import dataclass

from testaug.core.errors import InputError, Problem
from testaug.core.records import Label, Prompt, TestCase, content_id
from testaug.generation.parsing import render_item
from testaug.generation.prompts import PromptTemplate

logger = logging.getLogger(__name__)

# Tries to find a seed set not used yet before a description gets fewer prompts.
_MAX_TRIES = 20


@dataclass(frozen=True)
class SeedGroup:
    """The cases of one description that share a label, by the template behind them."""

    capability: str
    description_id: str
    description: str
    label: Label
    by_template: dict[str, list[TestCase]]


def seed_groups(cases: Iterable[TestCase]) -> list[SeedGroup]:
    """Cases grouped by description and label, in first-seen order.

    A case with no template (imported or generated) counts as a template of its own.
    Cases with a bracket in their text are left out: they would break the list format;
    a case listed twice counts once.
    """
    groups: dict[tuple[str, Label], SeedGroup] = {}
    seen: set[str] = set()
    for case in cases:
        if case.id in seen or any(b in (case.text + (case.text_pair or "")) for b in "{}"):
            continue
        seen.add(case.id)
        key = (case.description_id, case.label)
        group = groups.get(key)
        if group is None:
            group = groups[key] = SeedGroup(
                case.capability, case.description_id, case.description, case.label, {}
            )
        group.by_template.setdefault(case.template_id or case.id, []).append(case)
    return list(groups.values())


def sample_seeds(group: SeedGroup, k: int, rng: random.Random) -> list[TestCase]:
    """k cases of the group, one per template in a shuffled order, cycling when k exceeds them."""
    templates = list(group.by_template)
    rng.shuffle(templates)
    chosen: list[TestCase] = []
    chosen_ids: set[str] = set()
    total = sum(len(cases) for cases in group.by_template.values())
    for index in range(min(k, total)):
        pool = group.by_template[templates[index % len(templates)]]
        fresh = [case for case in pool if case.id not in chosen_ids]
        if not fresh:  # this template is used up: take from any template
            fresh = [c for cs in group.by_template.values() for c in cs if c.id not in chosen_ids]
        case = rng.choice(fresh)
        chosen.append(case)
        chosen_ids.add(case.id)
    return chosen


def build_prompts(
    cases: Iterable[TestCase],
    template: PromptTemplate,
    *,
    per_description: int = 10,
    k: int = 3,
    seed: int = 0,
) -> list[Prompt]:
    """`per_description` prompts for each description (and label), each with k seed cases.

    Seeded: each prompt draws from its own generator keyed by (seed, description,
    label, prompt index), so adding a description does not change the others.
    A description with too few cases for distinct seed sets gets fewer prompts.
    """
    prompts: list[Prompt] = []
    for group in seed_groups(cases):
        used: set[frozenset[str]] = set()
        for index in range(per_description):
            rng = random.Random(f"{seed}:{group.description_id}:{group.label}:{index}")
            for _ in range(_MAX_TRIES):
                seeds = sample_seeds(group, k, rng)
                if frozenset(c.id for c in seeds) not in used:
                    break
            else:
                logger.info("%s: only %d distinct seed sets", group.description, len(used))
                break
            used.add(frozenset(c.id for c in seeds))
            prompts.append(render_prompt(template, group, seeds))
    return prompts


def render_prompt(template: PromptTemplate, group: SeedGroup, seeds: list[TestCase]) -> Prompt:
    """The prompt record for one seed set: the template filled with the description and items."""
    items = [_item(template, case) for case in seeds]
    values = {"description": group.description, "examples": "\n".join(items)}
    text = template.render(**{name: values[name] for name in template.variables if name in values})
    return Prompt(
        id=content_id("prompt", template.name, template.sha, text),
        template=template.name,
        template_sha=template.sha,
        task=seeds[0].task,
        capability=group.capability,
        description_id=group.description_id,
        description=group.description,
        label=group.label,
        test_type=seeds[0].test_type,
        seed_case_ids=tuple(case.id for case in seeds),
        text=text,
    )


def _item(template: PromptTemplate, case: TestCase) -> str:
    fmt = template.format
    if fmt.is_pair and case.text_pair is None:
        raise InputError(
            Problem(
                f"case {case.id} has one text, but prompt {template.name!r} needs pairs",
                template.path,
            )
        )
    label_word = None
    if fmt.name == "labelled_pair":
        label_word = template.label_words.get(case.label) if isinstance(case.label, str) else None
        if label_word is None:
            raise InputError(
                Problem(
                    f"label {case.label!r} has no label word in prompt {template.name!r}",
                    template.path,
                    None,
                    "label_words",
                )
            )
    return render_item(fmt, case.text, case.text_pair, label_word)
