from __future__ import annotations

import datetime as _dt


def utc(t: float) -> _dt.datetime:
    return _dt.datetime.fromtimestamp(t, tz=_dt.UTC)


def iso(t: float) -> str:
    return utc(t).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_ms(t: float) -> str:
    d = utc(t)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{d.microsecond // 1000:03d}Z"
