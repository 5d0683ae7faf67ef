"""The registry of pluggable kinds: registering, looking up, forgetting, installed plugins."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from testaug.core.errors import TestAugError
from testaug.core.registry import Registry, RegistryError


class WidgetError(TestAugError):
    """The error of the domain a test registry serves."""


def double(x: int) -> int:
    return 2 * x


def triple(x: int) -> int:
    return 3 * x


def test_registered_names_are_found_and_listed_in_registration_order():
    widgets: Registry[object] = Registry("widget")
    widgets.register("double")(double)
    widgets.add("triple", triple)
    assert widgets.get("double") is double and widgets.get("triple")(2) == 6
    assert widgets.names() == ("double", "triple")
    assert "double" in widgets and "square" not in widgets


def test_register_as_decorator_returns_the_function_unchanged():
    widgets: Registry[object] = Registry("widget")

    @widgets.register("square")
    def square(x: int) -> int:
        return x * x

    assert square(3) == 9 and widgets.get("square") is square


def test_an_unknown_name_raises_the_domain_error_listing_the_known_names():
    widgets: Registry[object] = Registry("widget", error=WidgetError)
    widgets.add("double", double)
    widgets.add("triple", triple)
    with pytest.raises(
        WidgetError, match=r"unknown widget 'square' \(expected one of double, triple\)"
    ):
        widgets.get("square")


def test_an_empty_registry_says_none_is_registered():
    with pytest.raises(RegistryError, match="none registered"):
        Registry("widget").get("double")


def test_registering_a_name_twice_is_an_error_and_keeps_the_first():
    widgets: Registry[object] = Registry("widget")
    widgets.add("double", double)
    with pytest.raises(RegistryError, match="widget 'double' is already registered"):
        widgets.add("double", triple)
    assert widgets.get("double") is double


def test_an_empty_name_cannot_be_registered():
    with pytest.raises(RegistryError, match="non-empty name"):
        Registry("widget").add("", double)


def test_registered_block_adds_the_name_for_its_duration_only():
    widgets: Registry[object] = Registry("widget", error=WidgetError)
    with widgets.registered("double", double) as item:
        assert item is double and widgets.get("double") is double
    assert widgets.names() == ()
    with pytest.raises(WidgetError), widgets.registered("double", double):
        raise WidgetError("inside the block")
    assert "double" not in widgets


def test_remove_forgets_a_name_and_refuses_an_unknown_one():
    widgets: Registry[object] = Registry("widget", error=WidgetError)
    widgets.add("double", double)
    widgets.remove("double")
    assert widgets.names() == ()
    with pytest.raises(WidgetError, match="unknown widget 'double'"):
        widgets.remove("double")


def install_plugin(root: Path, group: str, entries: dict[str, str]) -> None:
    """A distribution on `root` (add it to sys.path) whose entry points in `group` are `entries`,
    with a module `widget_plugin` defining `halve`."""
    (root / "widget_plugin.py").write_text("def halve(x):\n    return x / 2\n")
    info = root / "widget_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: widget-plugin\nVersion: 1.0\n")
    lines = "".join(f"{name} = {value}\n" for name, value in entries.items())
    (info / "entry_points.txt").write_text(textwrap.dedent(f"[{group}]\n{lines}"))


def test_an_installed_entry_point_is_listed_and_loaded_when_asked_for(tmp_path, monkeypatch):
    group = "testaug.test_widgets"
    install_plugin(tmp_path, group, {"halve": "widget_plugin:halve", "double": "nowhere:double"})
    monkeypatch.syspath_prepend(str(tmp_path))
    widgets: Registry[object] = Registry("widget", entry_points=group)
    widgets.add("double", double)
    assert widgets.names() == ("double", "halve")
    assert "halve" in widgets
    assert widgets.get("halve")(3) == 1.5
    assert widgets.get("double") is double  # a registered name wins over a plugin's


def test_a_plugin_that_cannot_be_imported_raises_the_domain_error(tmp_path, monkeypatch):
    group = "testaug.test_broken_widgets"
    install_plugin(tmp_path, group, {"broken": "no_such_widget_module:thing"})
    monkeypatch.syspath_prepend(str(tmp_path))
    widgets: Registry[object] = Registry("widget", error=WidgetError, entry_points=group)
    with pytest.raises(WidgetError, match="cannot load widget 'broken' from no_such_widget_module"):
        widgets.get("broken")
