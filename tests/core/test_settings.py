"""Settings as a notebook user writes them: by field name or by environment variable."""

from __future__ import annotations

from testaug.core.settings import Settings


def test_settings_take_their_field_names_as_well_as_their_environment_names(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("TESTAUG_OPENAI_API_KEY", raising=False)
    by_name = Settings(openai_api_key="sk-by-name", label_studio_url="http://127.0.0.1:9")
    assert by_name.openai_api_key.get_secret_value() == "sk-by-name"
    assert by_name.label_studio_url == "http://127.0.0.1:9"
    by_alias = Settings(OPENAI_API_KEY="sk-by-alias")
    assert by_alias.openai_api_key.get_secret_value() == "sk-by-alias"


def test_the_environment_still_sets_the_key_and_the_secret_stays_hidden(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    settings = Settings()
    assert settings.openai_api_key.get_secret_value() == "sk-from-env"
    assert "sk-from-env" not in repr(settings)
