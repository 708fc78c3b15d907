"""The helpers the parsers share (tools/parsers/_text.py) and the package's re-exports."""

import importlib
import pkgutil

import forensic.tools.parsers as parsers
import pytest
from forensic.sandbox.errors import ParseError
from forensic.tools.parsers._text import BoundedWarnings, as_text, numbered_lines


def test_as_text():
    assert as_text("abc") == "abc"
    assert as_text(b"a\xffb") == "a\ufffdb"
    assert as_text(bytearray(b"xy")) == "xy"
    for bad in (None, 12, ["a"]):
        with pytest.raises(ParseError, match="expected text"):
            as_text(bad)


def test_numbered_lines_split_on_newline_only_and_cap_length():
    text = "a\r\nb\rc\n" + "x" * 9 + "\n" + "y" * 10 + "\nlast"
    assert list(numbered_lines(text, 10)) == [(1, "a"), (2, "b\rc"), (3, "x" * 9), (4, None), (5, "last")]
    assert list(numbered_lines("", 10)) == []
    assert list(numbered_lines("one\n", 10)) == [(1, "one")]


def test_numbered_lines_warns_about_long_lines():
    warnings = BoundedWarnings(5)
    assert [line for _, line in numbered_lines("ok\n" + "z" * 50, 8, warnings)] == ["ok", None]
    assert warnings == ["line 2: longer than 8 bytes, skipped"]


def test_bounded_warnings_suppress_after_cap():
    warnings = BoundedWarnings(3)
    for n in range(10):
        warnings.add(f"w{n}")
    assert warnings == ["w0", "w1", "w2", "further warnings suppressed"]
    assert warnings.dropped == 7


def test_bounded_warnings_count_dropped():
    warnings = BoundedWarnings(2, count_dropped=True)
    warnings.add("a")
    warnings.add("b")
    assert warnings == ["a", "b"]
    for _ in range(5):
        warnings.add("more")
    assert warnings == ["a", "b", "... and 5 more warnings"]


def test_package_reexports_every_parser_module():
    modules = [info.name for info in pkgutil.iter_modules(parsers.__path__) if not info.name.startswith("_")]
    expected: set[str] = set()
    for name in modules:
        module = importlib.import_module(f"forensic.tools.parsers.{name}")
        for public in module.__all__:
            assert getattr(parsers, public) is getattr(module, public), f"{name}.{public}"
        expected |= set(module.__all__)
    assert len(parsers.__all__) == len(set(parsers.__all__))
    assert set(parsers.__all__) == expected
