"""The committed Python reference (docs/reference/python.md) is what docs/python_reference.py
renders from the names `import testaug` offers now: a changed signature or docstring fails
here until the page is regenerated."""

from __future__ import annotations

from types import ModuleType

from tests.docs.page_generators import ROOT, page_generator


def generator() -> ModuleType:
    return page_generator("python_reference")


def test_the_committed_python_reference_is_a_fresh_render():
    committed = (ROOT / "docs" / "reference" / "python.md").read_text(encoding="utf-8")
    assert committed == generator().render(), (
        "docs/reference/python.md is out of date: run `python docs/python_reference.py`"
    )


def test_every_exported_name_has_a_section():
    import testaug

    page = generator().render()
    for name in testaug.__all__:
        if name != "__version__":
            assert f"### `{name}`" in page, name
