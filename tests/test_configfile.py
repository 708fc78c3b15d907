"""The one TOML + pydantic loader (forensic.configfile): every failure one line naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel, Field, model_validator

from forensic.configfile import load_toml, read_toml


class Oops(Exception):
    pass


class Inner(BaseModel):
    url: str
    port: int = Field(9401, ge=1, le=65535)


class Conf(BaseModel):
    name: str
    inner: Inner

    @model_validator(mode="after")
    def _named(self) -> Conf:
        if self.name == "bad":
            raise ValueError("a name that is refused")
        return self


def _file(tmp: Path, data: bytes | str) -> Path:
    p = tmp / "x.toml"
    p.write_bytes(data if isinstance(data, bytes) else data.encode())
    return p


def test_a_good_file_loads_with_extra_keys_merged(tmp_path: Path) -> None:
    p = _file(tmp_path, 'name = "a"\n[inner]\nurl = "http://h"\n')
    got = load_toml(p, Conf, error=Oops)
    assert got.inner.url == "http://h" and got.inner.port == 9401
    assert load_toml(p, Conf, error=Oops, extra={"name": "b"}).name == "b"


@pytest.mark.parametrize(
    "data,message",
    [
        (None, "x.toml: no such widget file"),
        ("", "x.toml: name: Field required"),
        ("name = ", "x.toml: not valid TOML ("),
        (b"\xff\xfe\x00binary", "x.toml: cannot read: "),
        (
            'name = "a"\n[inner]\nurl = "u"\nport = 0\n',
            "x.toml: inner.port: Input should be greater than or equal to 1",
        ),
        ('name = "bad"\n[inner]\nurl = "u"\n', "x.toml: (top level): a name that is refused"),
        ('name = "a"\n[[inner]]\nurl = "u"\n', "x.toml: inner: Input should be a valid dictionary"),
    ],
)
def test_every_failure_is_one_line_naming_the_file(
    tmp_path: Path, data: bytes | str | None, message: str
) -> None:
    p = tmp_path / "x.toml" if data is None else _file(tmp_path, data)
    with pytest.raises(Oops) as err:
        load_toml(p, Conf, error=Oops, what="widget file")
    text = str(err.value)
    assert text.startswith(str(tmp_path)) and message in text and "\n" not in text


def test_a_folder_is_not_a_file(tmp_path: Path) -> None:
    with pytest.raises(Oops, match="cannot read"):
        read_toml(tmp_path, error=Oops)


def test_a_deeply_nested_document_is_an_error_not_a_crash(tmp_path: Path) -> None:
    p = _file(tmp_path, "x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(Oops, match="not valid TOML"):
        read_toml(p, error=Oops)
