"""Built-in lexicons (CheckList's CL-8): any suite may use {first_name}, {city},
{religion_adj} and the rest without defining them; its own lexicon of a name wins."""

import math
from pathlib import Path

import pytest
import yaml

from testaug.core.errors import InputError
from testaug.suites.builtin_lexicons import ALIASES, builtin_dir, builtin_lexicons, file_header
from testaug.suites.cases import expand_suite, suite_stats
from testaug.suites.load import load_suite
from tests.cli_runner import run_testaug

PROTECTED = "{first_name} {last_name} is a {religion_adj} {nationality} from {city}, {country}."


def write_suite(folder: Path, templates: list[str], lexicons: str | None = None) -> Path:
    """A sentiment suite with these templates, and a lexicon file when given one."""
    suite = {
        "task": "sentiment",
        "labels": ["negative", "neutral", "positive"],
        "capabilities": [
            {
                "name": "Fairness",
                "descriptions": [
                    {"description": "A neutral sentence about a person.", "label": "neutral"}
                ],
            }
        ],
    }
    suite["capabilities"][0]["descriptions"][0]["templates"] = templates
    if lexicons is not None:
        (folder / "lexicons.yaml").write_text(lexicons)
        suite["lexicons"] = ["lexicons.yaml"]
    path = folder / "suite.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    return path


def test_a_suite_using_builtin_lexicons_without_defining_them_validates_and_expands(
    tmp_path: Path,
):
    path = write_suite(
        tmp_path, [PROTECTED, "{A:sexual_orientation} {gender_identity} {ethnicity} person."]
    )
    suite = load_suite(path)
    builtins = builtin_lexicons()
    used = {"first_name", "last_name", "religion_adj", "nationality", "city", "country"}
    used |= {"sexual_orientation", "gender_identity", "ethnicity"}
    assert set(suite.lexicons) == used  # only the lexicons the templates use are pulled in
    for name in used:
        assert suite.lexicons[name].words == builtins[name].words
    cases = list(expand_suite(suite, per_template=20, seed=3))
    assert len(cases) == 40
    for case in cases[:20]:
        assert case.fills["first_name"] in builtins["first_name"].words
        assert case.fills["city"] in case.text and case.fills["country"] in case.text
    assert cases[20].text.split()[0] in ("A", "An")
    first = ("first_name", "last_name", "religion_adj", "nationality", "city", "country")
    second = ("sexual_orientation", "gender_identity", "ethnicity")
    expected = sum(math.prod(len(builtins[n].words) for n in names) for names in (first, second))
    assert suite_stats(suite).cases == expected


def test_a_suite_own_lexicon_of_a_builtin_name_wins(tmp_path: Path):
    path = write_suite(
        tmp_path, ["{first_name} lives in {city}."], lexicons="city: [Springfield, Shelbyville]\n"
    )
    suite = load_suite(path)
    assert suite.lexicons["city"].words == ("Springfield", "Shelbyville")
    cities = {case.fills["city"] for case in expand_suite(suite)}
    assert cities == {"Springfield", "Shelbyville"}
    assert suite_stats(suite).cases == 2 * len(builtin_lexicons()["first_name"].words)


def test_numbered_copies_of_a_builtin_lexicon_get_distinct_words(tmp_path: Path):
    path = write_suite(tmp_path, ["{male_first_name1} and {male_first_name2} met."])
    cases = list(expand_suite(load_suite(path), per_template=200, seed=0))
    assert len(cases) == 200
    assert all(c.fills["male_first_name1"] != c.fills["male_first_name2"] for c in cases)


def test_checklist_names_male_female_and_sexual_adj_are_aliases(tmp_path: Path):
    builtins = builtin_lexicons()
    for alias, target in ALIASES.items():
        assert builtins[alias].words == builtins[target].words
        assert builtins[alias].alias_of == target
    suite = load_suite(write_suite(tmp_path, ["{male} and {female} are {sexual_adj}."]))
    assert suite.lexicons["male"].words == builtins["male_first_name"].words


def test_an_unknown_slot_still_errors_and_suggests_a_close_builtin_name(tmp_path: Path):
    path = write_suite(tmp_path, ["{frist_name} is here."])
    with pytest.raises(InputError) as caught:
        load_suite(path)
    (problem,) = caught.value.problems
    assert "unknown slot {frist_name}" in problem.message
    assert "did you mean {first_name}?" in problem.message


def test_gendered_first_name_lists_are_disjoint_and_first_name_is_their_union():
    builtins = builtin_lexicons()
    male = set(builtins["male_first_name"].words)
    female = set(builtins["female_first_name"].words)
    assert not male & female
    assert set(builtins["first_name"].words) == male | female
    assert {"James", "John", "Robert"} <= male and {"Mary", "Patricia", "Linda"} <= female
    assert len(male) >= 100 and len(female) >= 100 and len(builtins["last_name"].words) >= 200


def test_builtin_lexicons_cover_checklist_names_places_and_protected_groups():
    builtins = builtin_lexicons()
    for name in ("city", "country", "nationality", "religion", "religion_adj"):
        assert name in builtins
    assert {"London", "Tokyo", "Paris"} <= set(builtins["city"].words)
    assert {"India", "Brazil", "Germany"} <= set(builtins["country"].words)
    assert {"Muslim", "Jewish", "Christian"} <= set(builtins["religion_adj"].words)
    assert {"gay", "straight", "bisexual"} <= set(builtins["sexual_orientation"].words)
    assert {"Mexican", "Chinese", "American"} <= set(builtins["nationality"].words)


def test_each_builtin_lexicon_file_names_its_source_and_licence_and_is_small():
    files = sorted(builtin_dir().glob("*.yaml"))
    assert {f.name for f in files} == {"names.yaml", "places.yaml", "protected.yaml"}
    readme = (builtin_dir().parent / "README.md").read_text()
    for path in files:
        header = file_header(path)
        assert header.get("Source") and header.get("Licence"), path.name
        assert path.stat().st_size < 300_000
        assert f"lexicons/{path.name}" in readme
    for lexicon in builtin_lexicons().values():
        assert lexicon.source and lexicon.licence and lexicon.file
    assert "CC BY 4.0" in file_header(builtin_dir() / "places.yaml")["Licence"]


def test_suite_validate_names_the_builtin_lexicons_a_suite_uses_but_not_its_own(tmp_path: Path):
    path = write_suite(
        tmp_path, ["{first_name} lives in {city}."], lexicons="city: [Springfield]\n"
    )
    result = run_testaug(tmp_path, "suite", "validate", str(path))
    assert result.returncode == 0, result.stderr
    assert "2 lexicons" in result.stdout
    assert "built-in lexicons used: first_name" in result.stdout.replace("\n", " ")
    assert "city" not in result.stdout.split("used:")[1]


def test_suite_lexicons_command_lists_builtins_with_counts_and_sources(tmp_path: Path):
    result = run_testaug(tmp_path, "suite", "lexicons")
    assert result.returncode == 0, result.stderr
    assert "first_name" in result.stdout and "GeoNames" in result.stdout
    assert str(len(builtin_lexicons()["last_name"].words)) in result.stdout
    words = run_testaug(tmp_path, "suite", "lexicons", "sexual_adj")
    assert words.stdout.split() == list(builtin_lexicons()["sexual_orientation"].words)
    unknown = run_testaug(tmp_path, "suite", "lexicons", "nope")
    assert unknown.returncode != 0 and "no built-in lexicon 'nope'" in unknown.stderr
