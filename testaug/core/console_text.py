"""Lines for a rich console whose styling is kept apart from what they say.

`styled("[green]wrote[/] {:,} cases to {}", written, path)` reads rich markup in the template
only: each `{}` field is filled with its value as plain text after the markup is read, so a
`[...]` or a `:name:` in a path, an error message or a case text is printed as it is, never
taken for a style or an emoji. rich's own `escape` cannot promise that (a value ending in a
backslash, or holding `\\[`, comes out changed).
"""

from __future__ import annotations

from string import Formatter

from rich.text import Text

FIELD = "\ue000"  # a private-use character: where a field's value goes, in the read markup
CONVERSIONS = {"r": repr, "s": str, "a": ascii}


def styled(template: str, /, *values: object, **named: object) -> Text:
    """`template` (rich markup, with `str.format` fields) as Text, its fields filled with
    `values` and `named` as plain text that takes the style around the field."""
    filled: list[str] = []
    markup = ""
    auto = 0
    for literal, field, spec, conversion in Formatter().parse(template):
        markup += literal
        if field is None:
            continue
        if field == "":
            value, auto = values[auto], auto + 1
        elif field.isdigit():
            value = values[int(field)]
        else:
            value = named[field]
        if conversion:
            value = CONVERSIONS[conversion](value)
        filled.append(format(value, spec or ""))
        markup += FIELD
    read = Text.from_markup(markup, emoji=False)
    text = Text(style=read.style, end=read.end)
    start = 0
    for value in filled:
        at = read.plain.index(FIELD, start)
        text.append_text(read[start:at])
        text.append_text(_in_style_of(read[at : at + 1], value))
        start = at + 1
    text.append_text(read[start:])
    return text


def _in_style_of(field: Text, value: str) -> Text:
    """`value` as plain text with the styles that cover the one-character `field`."""
    out = Text(value, style=field.style)
    for span in field.spans:
        out.stylize(span.style, 0, len(value))
    return out
