"""English inflection of a base form by Penn tag: the verb forms VBZ, VBD, VBN, VBG and
plural nouns (NNS). Regular rules plus a table of common irregular words; template
slots such as `{vbz:pos_verb}` use it to inflect every word of a lexicon alike."""

from __future__ import annotations

import re

TAGS = ("vbz", "vbd", "vbn", "vbg", "nns")

# fmt: off
# base: (past, past participle)
_IRREGULAR_VERBS = {
    "be": ("was", "been"), "begin": ("began", "begun"), "break": ("broke", "broken"),
    "bring": ("brought", "brought"), "build": ("built", "built"), "buy": ("bought", "bought"),
    "catch": ("caught", "caught"), "choose": ("chose", "chosen"), "come": ("came", "come"),
    "cost": ("cost", "cost"), "cut": ("cut", "cut"), "do": ("did", "done"),
    "draw": ("drew", "drawn"), "drink": ("drank", "drunk"), "drive": ("drove", "driven"),
    "eat": ("ate", "eaten"), "fall": ("fell", "fallen"), "feel": ("felt", "felt"),
    "fight": ("fought", "fought"), "find": ("found", "found"), "fly": ("flew", "flown"),
    "forget": ("forgot", "forgotten"), "forgive": ("forgave", "forgiven"),
    "get": ("got", "gotten"), "give": ("gave", "given"), "go": ("went", "gone"),
    "grow": ("grew", "grown"), "have": ("had", "had"), "hear": ("heard", "heard"),
    "hide": ("hid", "hidden"), "hit": ("hit", "hit"), "hold": ("held", "held"),
    "hurt": ("hurt", "hurt"), "keep": ("kept", "kept"), "know": ("knew", "known"),
    "lead": ("led", "led"), "leave": ("left", "left"), "lend": ("lent", "lent"),
    "let": ("let", "let"), "lose": ("lost", "lost"), "make": ("made", "made"),
    "mean": ("meant", "meant"), "meet": ("met", "met"), "pay": ("paid", "paid"),
    "put": ("put", "put"), "read": ("read", "read"), "ride": ("rode", "ridden"),
    "ring": ("rang", "rung"), "rise": ("rose", "risen"), "run": ("ran", "run"),
    "say": ("said", "said"), "see": ("saw", "seen"), "sell": ("sold", "sold"),
    "send": ("sent", "sent"), "set": ("set", "set"), "shake": ("shook", "shaken"),
    "shine": ("shone", "shone"), "shoot": ("shot", "shot"), "show": ("showed", "shown"),
    "shut": ("shut", "shut"), "sing": ("sang", "sung"), "sit": ("sat", "sat"),
    "sleep": ("slept", "slept"), "speak": ("spoke", "spoken"), "spend": ("spent", "spent"),
    "stand": ("stood", "stood"), "steal": ("stole", "stolen"), "stick": ("stuck", "stuck"),
    "swim": ("swam", "swum"), "take": ("took", "taken"), "teach": ("taught", "taught"),
    "tear": ("tore", "torn"), "tell": ("told", "told"), "think": ("thought", "thought"),
    "throw": ("threw", "thrown"), "understand": ("understood", "understood"),
    "wake": ("woke", "woken"), "wear": ("wore", "worn"), "win": ("won", "won"),
    "write": ("wrote", "written"),
}
_IRREGULAR_THIRD = {"be": "is", "have": "has", "do": "does", "go": "goes"}
_IRREGULAR_PLURALS = {
    "child": "children", "man": "men", "woman": "women", "person": "people",
    "foot": "feet", "tooth": "teeth", "mouse": "mice", "goose": "geese",
    "staff": "staff", "crew": "crew", "fish": "fish", "sheep": "sheep",
    "series": "series", "aircraft": "aircraft", "luggage": "luggage", "baggage": "baggage",
}
# fmt: on
_VOWEL = "aeiou"
# Verbs whose final consonant doubles before -ed/-ing (stressed final syllable, CVC).
_DOUBLING = re.compile(r"(?:^|[^aeiou])[aeiou]([bdgklmnprt])$")
_NO_DOUBLING = {
    "visit",
    "open",
    "offer",
    "suffer",
    "enter",
    "travel",
    "order",
    "answer",
    "happen",
    "listen",
    "develop",
    "deliver",
    "consider",
    "cover",
    "wonder",
}


def inflect(base: str, tag: str) -> str:
    """The form of `base` for a Penn tag (vbz, vbd, vbn, vbg, nns). Multi-word nouns inflect
    their last word; multi-word verbs their first word after leading -ly adverbs
    ("really like", "look forward to")."""
    tag = tag.lower()
    if tag not in TAGS:
        raise ValueError(f"unknown inflection {tag!r}: expected one of {', '.join(TAGS)}")
    words = base.split(" ")
    if tag == "nns":
        index = len(words) - 1
    else:  # the verb after any leading adverbs: "really like" -> "really likes"
        index = next((i for i, w in enumerate(words[:-1]) if not w.endswith("ly")), 0)
        index = index if not words[index].endswith("ly") else len(words) - 1
    words[index] = _inflect_word(words[index], tag)
    return " ".join(words)


def _inflect_word(word: str, tag: str) -> str:
    lower = word.lower()
    if tag == "nns":
        return _keep_case(word, _IRREGULAR_PLURALS.get(lower) or _plural(lower))
    if tag == "vbz":
        return _keep_case(word, _IRREGULAR_THIRD.get(lower) or _third_person(lower))
    if tag == "vbg":
        return _keep_case(word, _gerund(lower))
    irregular = _IRREGULAR_VERBS.get(lower)
    if irregular:
        return _keep_case(word, irregular[0] if tag == "vbd" else irregular[1])
    return _keep_case(word, _past(lower))


def _third_person(word: str) -> str:
    if word.endswith(("s", "sh", "ch", "x", "z", "o")):
        return word + "es"
    if word.endswith("y") and len(word) > 1 and word[-2] not in _VOWEL:
        return word[:-1] + "ies"
    return word + "s"


def _plural(word: str) -> str:
    if word.endswith(("s", "sh", "ch", "x", "z")):
        return word + "es"
    if word.endswith("y") and len(word) > 1 and word[-2] not in _VOWEL:
        return word[:-1] + "ies"
    if word.endswith(("knife", "wife", "life")):  # not giraffe, cafe, safe
        return word[:-2] + "ves"
    return word + "s"


def _doubles(word: str) -> bool:
    return bool(_DOUBLING.search(word)) and word not in _NO_DOUBLING and len(word) <= 6


def _past(word: str) -> str:
    if word.endswith("e"):
        return word + "d"
    if word.endswith("y") and len(word) > 1 and word[-2] not in _VOWEL:
        return word[:-1] + "ied"
    if _doubles(word):
        return word + word[-1] + "ed"
    return word + "ed"


def _gerund(word: str) -> str:
    if word.endswith("ie"):
        return word[:-2] + "ying"
    if word.endswith("e") and not word.endswith(("ee", "ye", "oe")) and word != "be":
        return word[:-1] + "ing"
    if _doubles(word):
        return word + word[-1] + "ing"
    return word + "ing"


def _keep_case(original: str, inflected: str) -> str:
    return inflected[:1].upper() + inflected[1:] if original[:1].isupper() else inflected
