"""Settings from the environment (`TESTAUG_` prefix), read once by the CLI and passed down."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from testaug.core.secrets import remember_credentials, remember_url_credentials, remember_userinfo


def _default_cache_dir() -> Path:
    root = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(root) / "testaug"


class Settings(BaseSettings):
    """Where caches live, how to reach an LLM server and Label Studio. Secrets stay SecretStr."""

    model_config = SettingsConfigDict(env_prefix="TESTAUG_", extra="ignore", populate_by_name=True)

    cache_dir: Path = Field(default_factory=_default_cache_dir)
    openai_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("TESTAUG_OPENAI_API_KEY", "OPENAI_API_KEY")
    )
    base_url: str | None = Field(
        default=None, validation_alias=AliasChoices("TESTAUG_BASE_URL", "OPENAI_BASE_URL")
    )
    # `user:password` of the LLM server's URL: split off the URL where a command reads it, so
    # that no record or flow parameter holds it; put back where the request is sent.
    base_url_userinfo: SecretStr | None = None

    label_studio_url: str = Field(
        default="http://127.0.0.1:8080",
        validation_alias=AliasChoices("TESTAUG_LABEL_STUDIO_URL", "LABEL_STUDIO_URL"),
    )
    label_studio_api_key: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("TESTAUG_LABEL_STUDIO_API_KEY", "LABEL_STUDIO_API_KEY"),
    )

    def model_post_init(self, context: object, /) -> None:
        """The credentials given are remembered for redaction (`core.secrets`): a server
        that echoes one back, in an error or a completion, has it blanked."""
        for secret in (self.openai_api_key, self.label_studio_api_key):
            remember_credentials(secret.get_secret_value() if secret else None)
        if self.base_url_userinfo is not None:
            remember_userinfo(self.base_url_userinfo.get_secret_value())
        remember_url_credentials(self.base_url)
        remember_url_credentials(self.label_studio_url)

    @property
    def response_cache_path(self) -> Path:
        """The SQLite file of cached LLM completions."""
        return self.cache_dir / "responses.sqlite"

    @property
    def rankers_cache_path(self) -> Path:
        """The folder of ranker ensembles trained at first use or on runs."""
        return self.cache_dir / "rankers"
