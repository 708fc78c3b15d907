"""Deterministic file writing for bundles.

Every file goes through :class:`BundleWriter` so the same seed always yields the same bytes:
JSON is dumped with a fixed key order and gzip members carry no name and a zero mtime.
"""

from __future__ import annotations

import gzip
import io
import json
import os
from pathlib import Path


def gzip_bytes(data: bytes) -> bytes:
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as gz:
        gz.write(data)
    return buf.getvalue()


class BundleWriter:
    """Writes text files under one root; ``gz=True`` appends ``.gz`` and compresses."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.written: list[str] = []

    def text(self, rel: str, content: str, gz: bool = False) -> str:
        data = content.encode("utf-8")
        if gz:
            rel = rel + ".gz"
            data = gzip_bytes(data)
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(data)
        self.written.append(rel)
        return rel

    def json(self, rel: str, obj, gz: bool = False, indent: int | None = 2) -> str:
        return self.text(rel, json.dumps(obj, indent=indent, sort_keys=False) + "\n", gz=gz)


def tree_size(root: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            total += os.path.getsize(os.path.join(dirpath, name))
    return total
