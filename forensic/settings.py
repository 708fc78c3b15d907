"""Every setting forensic reads from the environment, in one validated object.

Nothing else in the package reads ``os.environ`` for configuration: a module asks
:func:`get_settings` (a fresh read each call, so a test or a service can change the environment).
Flags on the command line win over these; these win over the defaults.

==============================  ================================================================
``FORENSIC_STATE_DIR``          checkpoints and the audit log (default ``$XDG_STATE_HOME/forensic``,
                                else ``~/.local/state/forensic``)
``FORENSIC_EVALS_CACHE``        generated eval sets (default ``$XDG_CACHE_HOME/forensic/evals``,
                                else ``~/.cache/forensic/evals``)
``FORENSIC_LLM_BASE_URL``       OpenAI-compatible endpoint of the model planner
``FORENSIC_LLM_MODEL``          model name
``FORENSIC_LLM_API_KEY``        API key (kept out of reprs and logs)
``FORENSIC_LLM_PRICES``         price table file
``FORENSIC_LLM_TIMEOUT_S``      per-request timeout of the model planner, seconds
``FORENSIC_LLM_MAX_TOKENS``     completion token cap per model call
``FORENSIC_LLM_MAX_DATA_CHARS`` cap on the evidence text sent per model call
``FORENSIC_LOG_LEVEL``          ``DEBUG``, ``INFO``, ``WARNING`` (default), ``ERROR``
``FORENSIC_LOG_FORMAT``         ``text`` (default) or ``json`` (one object per line, for services)
==============================  ================================================================
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from forensic.errors import SettingsError

LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]


class Settings(BaseSettings):
    """forensic's configuration from the environment (prefix ``FORENSIC_``)."""

    model_config = SettingsConfigDict(
        env_prefix="FORENSIC_", extra="ignore", case_sensitive=False, env_ignore_empty=True
    )

    state_dir: Path | None = Field(None, description="Checkpoints and the audit log.")
    evals_cache: Path | None = Field(None, description="Where generated eval sets are written.")
    xdg_state_home: Path | None = Field(
        None,
        validation_alias=AliasChoices("XDG_STATE_HOME"),
        description="The XDG base for state when FORENSIC_STATE_DIR is unset.",
    )
    xdg_cache_home: Path | None = Field(
        None,
        validation_alias=AliasChoices("XDG_CACHE_HOME"),
        description="The XDG base for caches when FORENSIC_EVALS_CACHE is unset.",
    )
    llm_base_url: str | None = Field(None, description="OpenAI-compatible endpoint of the model planner.")
    llm_model: str | None = Field(None, description="Model name.")
    llm_api_key: SecretStr | None = Field(
        None, description="API key; a SecretStr so it never shows in a repr or a log."
    )
    llm_prices: Path | None = Field(None, description="Price table file.")
    llm_timeout_s: float | None = Field(
        None, gt=0, description="Per-request timeout of the model planner, seconds."
    )
    llm_max_tokens: int | None = Field(None, gt=0, description="Completion token cap per model call.")
    llm_max_data_chars: int | None = Field(
        None, gt=0, description="Cap on the evidence text sent per model call."
    )
    log_level: LogLevel = Field("WARNING", description="Level of forensic's loggers.")
    log_format: Literal["text", "json"] = Field(
        "text", description="text for people, json (one object per line) for services."
    )

    @field_validator("log_level", "log_format", mode="before")
    @classmethod
    def _any_case(cls, value: object, info) -> object:  # noqa: ANN001
        if not isinstance(value, str):
            return value
        return value.upper() if info.field_name == "log_level" else value.lower()

    def state_path(self) -> Path:
        """The state folder: FORENSIC_STATE_DIR, else the XDG state home, else ~/.local/state."""
        if self.state_dir:
            return self.state_dir
        return (self.xdg_state_home or Path.home() / ".local" / "state") / "forensic"

    def evals_cache_path(self) -> Path:
        """Where generated eval sets live: FORENSIC_EVALS_CACHE, else the XDG cache home."""
        if self.evals_cache:
            return self.evals_cache
        return (self.xdg_cache_home or Path.home() / ".cache") / "forensic" / "evals"


def get_settings() -> Settings:
    """Read and validate the settings now; a bad value is a SettingsError naming the variable."""
    try:
        return Settings()
    except ValidationError as exc:
        first = exc.errors()[0]
        field = str(first["loc"][0]) if first["loc"] else "?"
        name = field.upper() if field.startswith("xdg_") else f"FORENSIC_{field.upper()}"
        raise SettingsError(f"{name}: {first['msg']}") from None


__all__ = ["Settings", "get_settings"]
