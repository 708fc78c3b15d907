"""Structured logging: the standard library's ``logging``, one logger per package.

Modules log to ``logging.getLogger(__name__)``, so every record falls under one of the package
loggers (``forensic.harness``, ``forensic.tools``, ``forensic.sandbox``, ``forensic.evals``) and
their common parent ``forensic``, which a library user configures like any other. Fields go in
``extra={...}``, never formatted into the message, so that the JSON format keeps them as data:

    log.info("verdict", extra={"root_cause": "pcie_downtrain", "component": "h/gpu3"})

The CLI calls :func:`configure` once (``--log-level``, ``--log-format`` or ``FORENSIC_LOG_LEVEL``,
``FORENSIC_LOG_FORMAT``); a service uses ``json``: one object per line on stderr. Logs never go to
stdout, which carries the report.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import IO, Any

ROOT = "forensic"
PACKAGES = ("forensic.harness", "forensic.tools", "forensic.sandbox", "forensic.evals")

# Attributes every LogRecord has; anything else on a record came from ``extra``.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime", "taskName"}

logging.getLogger(ROOT).addHandler(logging.NullHandler())


def fields(record: logging.LogRecord) -> dict[str, Any]:
    """The structured fields a call passed in ``extra``."""
    return {k: v for k, v in vars(record).items() if k not in _STANDARD and not k.startswith("_")}


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time, level, logger, message, then the record's fields."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            **fields(record),
        }
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """``LEVEL logger: message key=value ...`` for people."""

    def format(self, record: logging.LogRecord) -> str:
        extra = " ".join(f"{k}={v}" for k, v in fields(record).items())
        line = f"{record.levelname} {record.name}: {record.getMessage()}" + (f" {extra}" if extra else "")
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


_HANDLER_FLAG = "_forensic_handler"


def configure(level: str = "WARNING", fmt: str = "text", stream: IO[str] | None = None) -> logging.Handler:
    """Send forensic's logs at ``level`` and above to ``stream`` (stderr) as ``text`` or ``json``.

    Calling it again replaces the handler it installed before, so nothing is logged twice.
    """
    root = logging.getLogger(ROOT)
    for h in list(root.handlers):
        if getattr(h, _HANDLER_FLAG, False):
            root.removeHandler(h)
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    setattr(handler, _HANDLER_FLAG, True)
    root.addHandler(handler)
    root.setLevel(level.upper())
    root.propagate = False
    return handler


__all__ = ["JsonFormatter", "PACKAGES", "ROOT", "TextFormatter", "configure", "fields"]
