import pytest

from testaug.suites.articles import indefinite_article, with_article


@pytest.mark.parametrize(
    ("phrase", "article"),
    [
        ("apple", "an"),
        ("pear", "a"),
        ("hour", "an"),
        ("hour-long delay", "an"),
        ("honest mistake", "an"),
        ("heir", "an"),
        ("university", "a"),
        ("unique seat", "a"),
        ("uninformed agent", "an"),
        ("umbrella", "an"),
        ("usual delay", "a"),
        ("European airline", "a"),
        ("one-way ticket", "a"),
        ("MBA", "an"),
        ("FAQ", "an"),
        ("URL", "a"),
        ("NASA engineer", "a"),
        ("8-hour flight", "an"),
        ("11-hour flight", "an"),
        ("110-seat plane", "a"),
        ("18", "an"),
        ("X-ray", "an"),
        ("", "a"),
    ],
)
def test_article_follows_the_sound_of_the_first_word(phrase, article):
    assert indefinite_article(phrase) == article


def test_with_article_capitalizes_on_request():
    assert with_article("hour", capital=True) == "An hour"
    assert with_article("seat") == "a seat"
