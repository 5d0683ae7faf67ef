"""`testaug review`: people judge what testaug proposes. A module per door it serves:

    candidates  generated candidates (`candidates.py`; once `testaug annotate`)
    tests       tests suggested for a tree (`tests.py`; once `testaug suggestions`)
    words       words suggested for lexicons (`words.py`; once `testaug lexicon review`, ...)
    server      a local Label Studio, and `install-server` (`server.py`)

Each kind of thing reviewed has the same verbs: `terminal`, `push`, `pull` and `apply`, and
the file of people's verdicts is `--verdicts` in each (`common.py`)."""

from __future__ import annotations

import typer


def review_door() -> typer.Typer:
    """`testaug review`: a door per kind of thing reviewed, and the Label Studio server."""
    from testaug.cli.groups import add_command, door
    from testaug.cli.review.candidates import candidates_door
    from testaug.cli.review.server import install_server_command, server_command
    from testaug.cli.review.tests import tests_door
    from testaug.cli.review.words import words_door

    group = door(
        "People judge what testaug proposes: generated candidates, suggested tests and "
        "suggested words, in the terminal or in Label Studio (`review server` starts one)."
    )
    group.add_typer(candidates_door(), name="candidates")
    group.add_typer(tests_door(), name="tests")
    group.add_typer(words_door(), name="words")
    add_command(group, "server", server_command)
    add_command(group, "install-server", install_server_command)
    return group
