"""An evidence source held in memory: a bundle read once into dicts.

It is the second implementation of the source protocols: after :meth:`MemorySource.from_bundle`
returns, nothing touches the filesystem, so an investigation over it proves that tools read only
through the protocols. Paths follow the replay host's rules (``..`` refused, ``.`` and empty
parts ignored), commands the same allowlist.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from forensic.sandbox.bundle import Bundle
from forensic.sandbox.errors import (
    CorruptInputError,
    ForensicError,
    NotAllowedError,
    NotFoundError,
    PathEscapeError,
)
from forensic.sandbox.host import HOST_COMMANDS, SWITCH_COMMANDS, command_file
from forensic.sandbox.sources import Document, MetricSets, Snapshot, SourceBase

from forensic.names import is_host_name

#: Deepest folder the loader descends into (sysfs trees are shallow; symlink loops are not).
_MAX_DEPTH = 24


def _norm(path: str) -> str:
    if "\x00" in path:
        raise PathEscapeError(f"path {path!r} contains a NUL byte")
    parts = [p for p in path.replace("\\", "/").split("/") if p not in ("", ".")]
    if ".." in parts:
        raise PathEscapeError(f"path {path!r} climbs out of the sandbox root ('..' is refused)")
    return "/".join(parts)


class _Tree:
    """Files (text + citation) and folders of one subtree, by normalised relative path."""

    def __init__(self) -> None:
        self.files: dict[str, Document] = {}
        self.dirs: dict[str, list[str]] = {}
        #: Files the bundle holds but that could not be read, with why: read again, they fail
        #: again (never taken for absent).
        self.unreadable: dict[str, str] = {}

    @classmethod
    def load(cls, bundle: Bundle, top: str) -> _Tree:
        tree = cls()
        fs = bundle.fs

        def walk(rel: str, depth: int, chain: frozenset[str]) -> None:
            real = os.path.realpath(fs.root / rel)
            if depth > _MAX_DEPTH or real in chain:
                return
            names = fs.list(rel)
            tree.dirs[_norm(rel[len(top) :])] = names
            for name in names:
                child = f"{rel}/{name}"
                if fs.is_dir(child):
                    walk(child, depth + 1, chain | {real})
                else:
                    try:
                        tree.files[_norm(child[len(top) :])] = Document(
                            fs.read_text(child), fs.source_of(child)
                        )
                    except ForensicError as exc:
                        tree.unreadable[_norm(child[len(top) :])] = str(exc)

        if fs.is_dir(top):
            walk(top, 0, frozenset())
        return tree


class MemoryHost:
    """A host served from a :class:`_Tree` (``before`` snapshot under ``before/``)."""

    def __init__(self, name: str, tree: _Tree, citation_base: str, snapshot: Snapshot = "now") -> None:
        self.name = name
        self.snapshot = snapshot
        self._tree = tree
        self._prefix = "before/" if snapshot == "before" else ""
        self._cite = citation_base + ("/before" if snapshot == "before" else "")

    def _key(self, path: str) -> str:
        return (self._prefix + _norm(path)).rstrip("/")

    def _unreadable(self, key: str) -> None:
        if key in self._tree.unreadable:
            raise CorruptInputError(self._tree.unreadable[key])

    def read(self, path: str) -> str:
        self._unreadable(self._key(path))
        doc = self._tree.files.get(self._key(path))
        if doc is None:
            raise NotFoundError(f"{path}: no such file in the sandbox")
        return doc.text

    def list(self, path: str) -> list[str]:
        return list(self._tree.dirs.get(self._key(path), []))

    def exists(self, path: str) -> bool:
        key = self._key(path)
        return key in self._tree.files or key in self._tree.dirs or key in self._tree.unreadable

    def source(self, path: str) -> str:
        doc = self._tree.files.get(self._key(path))
        return doc.source if doc else f"{self._cite}/{_norm(path)}"

    def run(self, argv: Sequence[str]) -> str:
        key = f"{self._prefix}cmd/{command_file(argv, HOST_COMMANDS)}"
        self._unreadable(key)
        doc = self._tree.files.get(key)
        if doc is None:
            raise NotFoundError(f"{self.name}: no recorded output of {' '.join(argv)}")
        return doc.text

    def has_command(self, argv: Sequence[str]) -> bool:
        key = f"{self._prefix}cmd/{command_file(argv, HOST_COMMANDS)}"
        return key in self._tree.files or key in self._tree.unreadable

    def command_source(self, argv: Sequence[str]) -> str:
        return self.source(f"cmd/{command_file(argv, HOST_COMMANDS)}")

    def nvml(self) -> dict[str, Any] | None:
        self._unreadable(f"{self._prefix}nvml.json")
        doc = self._tree.files.get(f"{self._prefix}nvml.json")
        if doc is None:
            return None
        try:
            data = json.loads(doc.text)
        except json.JSONDecodeError as exc:
            raise CorruptInputError(f"{doc.source}: not valid JSON ({exc.msg})") from None
        if not isinstance(data, dict):
            raise CorruptInputError(f"{doc.source}: expected a JSON object")
        return data

    def nvml_source(self) -> str:
        return self.source("nvml.json")


class MemorySwitch:
    """A switch whose recorded show outputs are held in memory."""

    def __init__(
        self,
        name: str,
        outputs: dict[str, Document],
        citation_base: str,
        unreadable: dict[str, str] | None = None,
    ) -> None:
        self.name = name
        self._outputs = outputs
        self._unreadable = unreadable or {}
        self._cite = citation_base

    def run(self, argv: Sequence[str]) -> str:
        if (why := self._unreadable.get(command_file(argv, SWITCH_COMMANDS))) is not None:
            raise CorruptInputError(why)
        doc = self._outputs.get(command_file(argv, SWITCH_COMMANDS))
        if doc is None:
            raise NotFoundError(f"{self.name}: no recorded output of {' '.join(argv)}")
        return doc.text

    def command_source(self, argv: Sequence[str]) -> str:
        name = command_file(argv, SWITCH_COMMANDS)
        doc = self._outputs.get(name)
        return doc.source if doc else f"{self._cite}/cmd/{name}"


class MemorySource(SourceBase):
    """Every piece of a bundle's evidence, in dicts."""

    def __init__(
        self,
        *,
        locator: str,
        incident: Any,
        topology: Any,
        hosts: dict[str, _Tree],
        collected: dict[str, dict[str, float]],
        switches: dict[str, dict[str, Document]],
        steps: list[Document],
        logs: dict[str, Document],
        metrics: MetricSets,
        notes: list[str] | None = None,
        switch_unreadable: dict[str, dict[str, str]] | None = None,
    ) -> None:
        self.locator = locator
        self.incident = incident
        self.topology = topology
        self.metrics = metrics
        self._hosts = hosts
        self._collected = collected
        self._switches = switches
        self._switch_unreadable = switch_unreadable or {}
        self._steps = steps
        self._logs = logs
        self._notes = list(notes or [])
        self._rank_map = None

    @classmethod
    def from_bundle(cls, bundle: Bundle) -> MemorySource:
        """Read everything a tool may ask for; afterwards the bundle's files are never opened."""
        from forensic.sandbox.sources import BundleSource, OpenMetricsFiles

        replay = BundleSource(bundle)
        hosts = {
            name: _Tree.load(bundle, f"nodes/{name}")
            for name in replay.host_names()
            if is_host_name(name) and bundle.fs.is_dir(f"nodes/{name}")
        }
        switches: dict[str, dict[str, Document]] = {}
        switch_unreadable: dict[str, dict[str, str]] = {}
        for name in replay.switch_names():
            if not is_host_name(name):
                continue  # never read from the bundle either (ReplaySwitch refuses the name)
            tree = _Tree.load(bundle, f"switches/{name}/cmd")
            switches[name] = dict(tree.files)
            switch_unreadable[name] = dict(tree.unreadable)
        files = OpenMetricsFiles(bundle)
        return cls(
            locator=f"memory:{bundle.root}",
            incident=bundle.incident.model_copy(deep=True),
            topology=bundle.topology.model_copy(deep=True) if bundle.topology else None,
            hosts=hosts,
            collected={name: replay.collected(name) for name in hosts},
            switches=switches,
            switch_unreadable=switch_unreadable,
            steps=replay.steps(),
            # Read now: a bundle's logs are streamed lazily, and this copy must not touch files later.
            logs={
                name: Document(d.text, d.source) for name in replay.log_names() for d in [replay.log(name)]
            },
            metrics=MetricSets(files._sets, files._errors),
            notes=replay.notes(),
        )

    def notes(self) -> list[str]:
        return list(self._notes)

    def host_names(self) -> list[str]:
        names = [h.name for h in self.topology.hosts] if self.topology else []
        return names + [n for n in self._hosts if n not in names]

    def host(self, name: str, snapshot: Snapshot = "now") -> MemoryHost:
        if not is_host_name(name):  # refused as the replay host refuses it, whatever was loaded
            raise NotAllowedError(f"host name {name!r} is not a valid host name")
        if name not in self._hosts:
            raise NotFoundError(f"no node data for host {name!r}")
        return MemoryHost(name, self._hosts[name], f"nodes/{name}", snapshot)

    def collected(self, host: str) -> dict[str, float]:
        return dict(self._collected.get(host, {}))

    def switch_names(self) -> list[str]:
        names = [s.name for s in self.topology.switches] if self.topology else []
        return names + [n for n in self._switches if n not in names]

    def switch(self, name: str) -> MemorySwitch:
        if not is_host_name(name):
            raise NotAllowedError(f"switch name {name!r} is not a valid switch name")
        return MemorySwitch(
            name, self._switches.get(name, {}), f"switches/{name}", self._switch_unreadable.get(name)
        )

    def steps(self) -> list[Document]:
        return list(self._steps)

    def log_names(self) -> list[str]:
        return sorted(self._logs)

    def log(self, name: str) -> Document:
        try:
            return self._logs[name]
        except KeyError:
            raise NotFoundError(f"no job log named {name!r}") from None


__all__ = ["MemoryHost", "MemorySource", "MemorySwitch"]
