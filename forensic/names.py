"""Names that become path components and command arguments: hosts, switches, netdevs.

One check per kind of name, used by every module that takes such a name from a bundle, a fleet
file, a model or a person (``nodes/<host>/``, ``switches/<name>/``, ``ethtool -S <netdev>``).

- A **host name** (switches too) follows DNS/hostname grammar: at most 253 characters, labels of
  1-63 characters separated by dots, each label of letters, digits, ``-`` and ``_`` that neither
  starts nor ends with ``-``. ``_`` is not DNS but real fleets use it (``gpu_a017``), and earlier
  versions accepted it. So ``gpu1510.rack12.row03.datacenter-frankfurt-2.production.example-corp.internal``
  is a host name; ``..``, ``/``, NUL, spaces, control characters, a leading dot and a trailing
  newline are not.
- A **netdev name** (``eth0``, ``ib0``, ``enp1s0f0``, ``bond0:1``) is at most 64 characters of
  letters, digits, ``.``, ``_``, ``:`` and ``-``, starting with a letter or digit.

Every check matches the whole string (``fullmatch``): ``$`` would let a trailing newline through.
Standard library only: the step recorder (:mod:`forensic.record`) runs inside training jobs and
checks its host name here too; ``forensic.sandbox`` re-exports these.
"""

from __future__ import annotations

import re

#: The longest host name DNS allows (RFC 1035 presentation form without the trailing dot).
HOST_NAME_MAX = 253

_LABEL = r"[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?"
#: The grammar as a schema pattern (pydantic ``pattern=``, JSON schema for models); the length is
#: checked beside it (``max_length=HOST_NAME_MAX``).
HOST_NAME_PATTERN = rf"^{_LABEL}(?:\.{_LABEL}){{0,126}}$"
_HOST = re.compile(HOST_NAME_PATTERN[1:-1])
_NETDEV = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}")


def is_host_name(name: object) -> bool:
    """Whether ``name`` is a host (or switch) name that is safe as one path component."""
    return isinstance(name, str) and len(name) <= HOST_NAME_MAX and _HOST.fullmatch(name) is not None


def is_netdev_name(name: object) -> bool:
    """Whether ``name`` is a network interface name that is safe in an argv and a file name."""
    return isinstance(name, str) and _NETDEV.fullmatch(name) is not None
