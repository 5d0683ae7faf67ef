"""Indefinite articles chosen by sound, not by first letter: "an hour", "a university", "an MBA"."""

from __future__ import annotations

import re

# Letters whose spoken names start with a vowel sound: "an F", "an MBA", "an X-ray".
_VOWEL_SOUND_LETTERS = set("AEFHILMNORSX")
# Acronyms read as words, not letter by letter.
_WORD_ACRONYMS = {
    "NASA",
    "NATO",
    "UNESCO",
    "UNICEF",
    "OPEC",
    "FIFA",
    "NAFTA",
    "ASAP",
    "AIDS",
    "SIM",
}
# Silent h: the word starts with a vowel sound.
_SILENT_H = ("hour", "honest", "honor", "honour", "heir")
# A written vowel that sounds like a consonant ("you", "wuh").
_CONSONANT_SOUND_PREFIXES = ("eu", "ewe", "uni", "unanim", "once")
_VOWEL_SOUND_EXCEPTIONS = ("unin", "unim", "unid")  # "an uninformed", "an unimportant"
_U_AS_YOU = re.compile(r"^u[bcdfgjklmprstvz][aeiouy]")  # usual, utensil, ubiquitous, uranium
_FIRST_TOKEN = re.compile(r"[\w'’.-]+")


def indefinite_article(phrase: str) -> str:
    """Return "a" or "an" for the phrase, judged by the sound of its first word."""
    match = _FIRST_TOKEN.search(phrase)
    if not match:
        return "a"
    word = match.group(0).strip(".'’")
    if not word:
        return "a"
    if word[0].isdigit():
        return _article_for_number(word)
    if len(word) == 1 or (word.isupper() and word.isalpha() and word not in _WORD_ACRONYMS):
        return "an" if word[0].upper() in _VOWEL_SOUND_LETTERS else "a"
    lower = word.lower()
    if lower.startswith(_SILENT_H):
        return "an"
    if lower == "one" or lower.startswith(("one-", "one'")):
        return "a"
    if lower.startswith(_VOWEL_SOUND_EXCEPTIONS):
        return "an"
    if lower.startswith(_CONSONANT_SOUND_PREFIXES) or _U_AS_YOU.match(lower):
        return "a"
    if lower.startswith("x-"):
        return "an"
    return "an" if lower[0] in "aeiou" else "a"


def _article_for_number(token: str) -> str:
    """ "an 8", "an 11", "an 18,000", "an 80" but "a 1", "a 110", "a 100"."""
    digits = re.sub(r"[^\d]", "", token.split(".")[0])
    if digits.startswith("8"):
        return "an"
    if digits[:2] in ("11", "18") and len(digits) % 3 == 2:  # eleven, eighteen thousand
        return "an"
    return "a"


def with_article(phrase: str, capital: bool = False) -> str:
    """The phrase preceded by its indefinite article ("An" when `capital`)."""
    article = indefinite_article(phrase)
    return f"{article.capitalize() if capital else article} {phrase}"
