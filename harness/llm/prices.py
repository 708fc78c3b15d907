"""Per-model token prices (``prices.toml``) and what a call costs."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from forensic.sandbox.errors import ModelError
from pydantic import BaseModel, Field

from forensic.configfile import load_toml

PRICES_FILE = Path(__file__).with_name("prices.toml")


class Price(BaseModel):
    """What one model charges."""

    model_config = {"frozen": True}

    input: float = Field(ge=0.0, description="US dollars per million prompt tokens.")
    output: float = Field(ge=0.0, description="US dollars per million completion tokens.")

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        """Dollars for a call of this size."""
        return (prompt_tokens * self.input + completion_tokens * self.output) / 1_000_000


#: The price of a model nobody priced: free, and the caller says so.
UNPRICED = Price(input=0.0, output=0.0)


class PriceTable(BaseModel):
    """Prices by model name (``[models."<name>"]`` tables of ``prices.toml``)."""

    models: dict[str, Price] = Field(
        default_factory=dict, description="Model name (or name prefix) -> price."
    )

    def lookup(self, model: str) -> Price | None:
        """The exact entry, else the longest entry that prefixes ``model``, else None."""
        if model in self.models:
            return self.models[model]
        prefixes = [name for name in self.models if model.startswith(name)]
        return self.models[max(prefixes, key=len)] if prefixes else None


@lru_cache(maxsize=8)
def load_prices(path: Path | str = PRICES_FILE) -> PriceTable:
    """Load and validate a price table; a broken one is a ModelError naming the file."""
    return load_toml(path, PriceTable, error=ModelError, what="price table")
