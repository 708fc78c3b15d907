"""The wall budget bounds the whole run (reads, gzip checks, tools, model replies);
rank_map and gzip bombs cost what the bundle can hold, not what it claims."""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time
from pathlib import Path

import pytest
from forensic.harness.budget import Limits
from forensic.harness.graph import Investigator
from forensic.harness.llm.client import ModelClient
from forensic.sandbox import Bundle, CorruptInputError, ModelError, _fs, deadline
from forensic.sandbox.errors import WallTimeExceeded
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.memory import InMemorySaver

from tests.conftest import build_bundle


def _set_job(root: Path, **job) -> None:
    inc = json.loads((root / "incident.json").read_text())
    inc["job"] = {**inc.get("job", {}), **job}
    (root / "incident.json").write_text(json.dumps(inc))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ranks=st.integers(min_value=0, max_value=10**15), per=st.integers(min_value=1, max_value=10**9))
def test_rank_map_costs_what_the_hosts_hold(tmp_path_factory, ranks: int, per: int) -> None:
    root = build_bundle(tmp_path_factory.mktemp("b"), None)
    (root / "topology.json").unlink(missing_ok=True)  # no explicit placement: the default one
    _set_job(root, ranks=ranks, gpus_per_node=per)
    b = Bundle(root)
    mapping = b.rank_map()
    assert len(mapping) <= len(b.host_names()) * b.gpus_per_node
    assert len(mapping) == min(
        ranks or len(b.host_names()) * b.gpus_per_node, len(b.host_names()) * b.gpus_per_node
    )
    # Tools place ranks through the evidence source: the same bound holds there, in memory too.
    from forensic.sandbox import open_source
    from forensic.sandbox.memory import MemorySource

    assert open_source(b).rank_map() == mapping
    assert MemorySource.from_bundle(b).rank_map() == mapping


def test_a_gzip_bomb_costs_the_cap_at_open_and_is_refused_when_read(make_bundle, monkeypatch) -> None:
    monkeypatch.setattr(_fs, "MAX_READ_BYTES", 1 << 20)
    root = make_bundle(None)
    bomb = root / "job" / "logs" / "bomb.log.gz"
    bomb.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(bomb, "wb") as fh:
        for _ in range(16):
            fh.write(b"\0" * (1 << 20))
    b = Bundle(root)  # opens: the open-time check stops at the cap instead of inflating 16 MB
    with pytest.raises(CorruptInputError, match="per-file cap"):
        b.fs.read_bytes("job/logs/bomb.log")


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(size=st.integers(min_value=0, max_value=3 << 20))
def test_every_read_is_capped(tmp_path_factory, size: int) -> None:
    root = tmp_path_factory.mktemp("cap")
    (root / "f.txt").write_bytes(b"x" * size)
    fs = _fs.ConfinedFS(root)
    cap = 1 << 20
    old, _fs.MAX_READ_BYTES = _fs.MAX_READ_BYTES, cap
    try:
        if size > cap:
            with pytest.raises(CorruptInputError):
                fs.read_bytes("f.txt")
        else:
            assert len(fs.read_bytes("f.txt")) == size
    finally:
        _fs.MAX_READ_BYTES = old


def test_reads_stop_at_the_deadline(make_bundle) -> None:
    fs = Bundle(make_bundle(None)).fs
    with pytest.raises(WallTimeExceeded):
        with deadline.deadline(0.0):
            fs.read_text("incident.json")


def test_the_alarm_interrupts_code_that_never_checks() -> None:
    with pytest.raises(WallTimeExceeded):
        with deadline.deadline(0.05, what="spinning"):
            while True:  # a parser stuck on a pathological input
                pass


def test_a_tool_that_outruns_the_budget_ends_the_run_inconclusive(make_bundle, monkeypatch) -> None:
    from forensic.tools import get_tool

    tool = get_tool("job_steps")
    cls = type(tool)

    def stuck(self, ctx, args):
        while True:
            pass

    monkeypatch.setattr(cls, "run", stuck)
    inv = Investigator(make_bundle("pcie_downtrain"), limits=Limits(wall_s=1.0), checkpointer=InMemorySaver())
    report = inv.run()
    assert report["status"] == "inconclusive"
    assert any("wall_s" in n for n in report["notes"])


class _Drip:
    """A loopback 'model endpoint' that sends its reply one byte at a time, forever."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = self.sock.getsockname()[1]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                try:
                    conn.recv(65536)
                    conn.sendall(
                        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n"
                    )
                    while not self.stop.is_set():
                        conn.sendall(b" ")
                        time.sleep(0.05)
                except OSError:
                    continue

    def close(self) -> None:
        self.stop.set()
        self.sock.close()
        self.thread.join(5)


def test_a_dripping_model_endpoint_is_cut_off_by_the_call_budget() -> None:
    drip = _Drip()
    try:
        client = ModelClient(
            base_url=f"http://127.0.0.1:{drip.port}/v1", model="m", timeout_s=30, max_attempts=1
        )
        with pytest.raises(ModelError):
            client.complete([{"role": "user", "content": "hi"}], max_tokens=16, within_s=1.0)
        assert client.tally.attempts == 1
    finally:
        drip.close()
