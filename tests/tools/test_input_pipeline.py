"""Input-pipeline stalls read widely: every wording a table entry, the hosts'
kernel logs and I/O pressure, and the weighing that makes one line a lead, not a verdict."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from forensic.harness.failure_graph import beliefs, default_graph, observe, score
from forensic.sandbox import Bundle
from forensic.tools import ToolContext, get_tool
from forensic.tools._trainer_log import TrainerFacts
from forensic.tools.input_pipeline import storage_lines

G = default_graph()


@pytest.mark.parametrize(
    "line,label",
    [
        ("RuntimeError: DataLoader worker (pid 48213) is killed by signal: Killed.", "pytorch"),
        ("RuntimeError: DataLoader timed out after 1800 seconds", "pytorch"),
        ("[rank3] Timeout waiting for batch from worker 2", "pytorch"),
        ("iteration 120 | elapsed time per iteration (ms): 2100.5 | dataloader: 1.84 s", "data_wait"),
        ("step 200 loss 2.31 batch_wait=0.92s", "data_wait"),
        ("Got disconnected from remote data host. Retrying in 5sec [3/20]", "hf_datasets"),
        ("webdataset: shard pipe:aws s3 cp s3://b/shard-0012.tar - timed out, retry 2", "hf_datasets"),
        (
            "W tensorflow/core/data/root_dataset.cc: tf.data input is the bottleneck: prefetch starving",
            "tf.data",
        ),
        ("Filling up shuffle buffer (this may take a while): 4019 of 10000", "tf.data"),
        ("nvidia.DALI pipeline: reader stalled waiting for file data", "dali"),
        ("Ray Data: operator ReadParquet backpressure, waiting for resources", "ray"),
        ("prefetch queue is empty, waiting for producer", "prefetch"),
        ("data_time: 0.84 s", "data_time"),
    ],
)
def test_trainer_input_stall_wordings(line: str, label: str) -> None:
    t = TrainerFacts()
    t.add_lines([line])
    assert [k for k, _ in t.stalls] == [label], line


@pytest.mark.parametrize(
    "line,label",
    [
        (
            "botocore.exceptions.ClientError: An error occurred (SlowDown) when calling GetObject: Please reduce your request rate.",
            "s3",
        ),
        ('urllib3 Read timeout on endpoint URL: "https://bucket.s3.amazonaws.com/shard-0001"', "s3"),
        ("HTTP 503 Service Unavailable from s3 endpoint", "s3"),
        ("nfs: server filer01 not responding, still trying", "nfs"),
        ("nfs: server filer01 OK", "nfs"),
        ("LustreError: 11-0: scratch-OST0004-osc: operation ost_read failed", "lustre"),
        ("ptlrpc_expire_one_request: @@@ Request sent has timed out", "lustre"),
        ("mmfs: Node 10.1.2.3 expelled: lease renewal timeout", "gpfs"),
        ("wekafs: backend unreachable, io timeout on /mnt/weka", "weka"),
        ("INFO: task pt_data_worker:4411 blocked for more than 120 seconds.", "blocked"),
    ],
)
def test_trainer_storage_wordings(line: str, label: str) -> None:
    t = TrainerFacts()
    t.add_lines([line])
    assert [k for k, _ in t.storage] == [label], line


def test_rendezvous_timeouts_are_not_input_stalls() -> None:
    t = TrainerFacts()
    t.add_lines(
        [
            "torch.distributed.DistStoreError: Timeout waiting for key: default_pg/0/rank_3",
            "NCCL WARN Timeout waiting for connection",
        ]
    )
    assert t.stalls == [] and t.storage == []


WINDOW = (1_776_390_000.0, 1_776_395_400.0)


@pytest.mark.parametrize(
    "body,label",
    [
        ("nfs: server filer01 not responding, still trying", "nfs"),
        ("nfs: server filer01 OK", "nfs"),
        (
            "LustreError: 167-0: scratch-OST0002-osc-ffff: This client was evicted by scratch-OST0002",
            "lustre",
        ),
        (
            "Lustre: scratch-OST0004-osc: Connection to scratch-OST0004 (at 10.0.0.4@o2ib) was lost; in progress operations using this service will wait",
            "lustre",
        ),
        ("mmfs: [E] Node 10.1.2.3 (gpfs-02) lease renewal is overdue; expel pending", "gpfs"),
        ("INFO: task pt_data_worker:4411 blocked for more than 120 seconds.", "blocked_input_task"),
        ("INFO: task cache_mgr_event:620917 blocked for more than 120 seconds.", "blocked_task"),
    ],
)
def test_kernel_storage_lines_every_wording(body: str, label: str) -> None:
    boot = WINDOW[0] - 1000
    text = f"[ 1500.000000] {body}\n[    1.000000] pci 0000:18:00.0: enabling device\n"
    found, history = storage_lines(text, boot=boot, year=2026, window=WINDOW)
    assert [k for k, _ in found] == [label] and history == 0


def test_kernel_storage_lines_long_before_the_window_are_history() -> None:
    text = "[    5.000000] nfs: server filer01 not responding, still trying\n"
    found, history = storage_lines(text, boot=WINDOW[0] - 86400 * 3, year=2026, window=WINDOW)
    assert found == [] and history == 1


def _bundle(tmp_path: Path, dmesg_extra: str = "", pressure: str | None = None) -> Path:
    from tests.conftest import HOSTS, build_bundle

    root = build_bundle(tmp_path / "b", None) or tmp_path / "b"
    if dmesg_extra:
        for host in HOSTS:
            p = root / f"nodes/{host}/cmd/dmesg.txt"
            boot = json.loads((root / f"nodes/{host}/collected.json").read_text())["boot"]
            start = json.loads((root / "incident.json").read_text())["window"]["start"]
            from datetime import datetime

            up = datetime.fromisoformat(start.replace("Z", "+00:00")).timestamp() - boot + 900
            p.write_text(p.read_text() + f"[{up:.6f}] {dmesg_extra}\n")
    if pressure is not None:
        for host in HOSTS:
            p = root / f"nodes/{host}/cmd/pressure-io.txt"
            p.write_text(pressure)
    return root


def test_tool_finds_one_nfs_line_and_io_pressure(tmp_path: Path) -> None:
    root = _bundle(
        tmp_path,
        "nfs: server filer01 not responding, still trying",
        "some avg10=41.20 avg60=38.75 avg300=20.01 total=912345678\nfull avg10=30.00 avg60=28.10 avg300=12.00 total=512345678\n",
    )
    res = get_tool("input_pipeline")(ToolContext(Bundle(root)), {})
    names = {s.name for s in res.signals}
    assert res.status == "ok" and names == {"storage_stall_kernel", "io_pressure_high"}
    stall = next(s for s in res.signals if s.name == "storage_stall_kernel")
    assert stall.component == "job" and stall.values["hosts"] == 2 and "nfs" in stall.values["kinds"]


def test_tool_is_quiet_on_a_healthy_fleet(tmp_path: Path) -> None:
    root = _bundle(
        tmp_path,
        pressure="some avg10=0.50 avg60=0.40 avg300=0.30 total=1234\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
    )
    res = get_tool("input_pipeline")(ToolContext(Bundle(root)), {})
    assert res.status == "ok" and res.signals == [] and "job" in res.covered


def _rec(i: int, tool: str, names: list[str]) -> dict:
    return {
        "id": f"ev-{i}",
        "tool": tool,
        "status": "ok",
        "covered": ["job"],
        "summary": tool,
        "args": {},
        "signals": [{"name": n, "component": "job", "kind": "job", "detail": n, "values": {}} for n in names],
    }


def test_one_kernel_storage_line_makes_the_stall_the_lead_but_not_confirmed() -> None:
    # Step physics without compute_s: a slowdown that cannot be split, plus one NFS line.
    obs = observe(
        [
            _rec(1, "job_steps", ["job_slowdown", "slowdown_unattributed"]),
            _rec(2, "input_pipeline", ["storage_stall_kernel"]),
        ]
    )
    top = beliefs(G, obs)[0]
    assert (top.root_cause, top.component) == ("input_pipeline_stall", "job")
    assert not top.confirmed  # the causal tie (gaps grew, or the trainer says it waited) is missing
    tied = observe(
        [
            _rec(1, "job_steps", ["job_slowdown", "slowdown_in_gaps"]),
            _rec(2, "input_pipeline", ["storage_stall_kernel"]),
        ]
    )
    assert score(G.root_causes["input_pipeline_stall"], "job", tied).confirmed


def test_a_weak_trainer_hint_never_outweighs_clean_steps() -> None:
    obs = observe([_rec(1, "job_steps", ["steps_clean"]), _rec(2, "job_logs", ["input_stall_hint"])])
    assert beliefs(G, obs)[0].root_cause == "healthy"


def test_io_pressure_from_node_exporter_psi_series(tmp_path: Path) -> None:
    from datetime import datetime

    from tests.conftest import HOSTS

    root = _bundle(tmp_path)
    start = json.loads((root / "incident.json").read_text())["window"]["start"]
    t0 = datetime.fromisoformat(start.replace("Z", "+00:00")).timestamp()
    lines = ["# TYPE node_pressure_io_waiting_seconds_total counter"]
    for host in HOSTS:
        for k in range(9):  # 0.45 s of every second waiting on I/O, late in the window
            v = 0.02 * 600 * k if k < 5 else 0.02 * 600 * 5 + 0.45 * 600 * (k - 5)
            lines.append(
                f'node_pressure_io_waiting_seconds_total{{instance="{host}:9100",job="node"}} {v:.1f} {t0 + 600 * k:.0f}'
            )
    (root / "metrics").mkdir(exist_ok=True)
    (root / "metrics/node.om").write_text("\n".join(lines) + "\n# EOF\n")
    res = get_tool("input_pipeline")(ToolContext(Bundle(root)), {})
    sig = [s for s in res.signals if s.name == "io_pressure_high"]
    assert sig and sig[0].values["hosts_high"] == 2 and 40.0 <= sig[0].values["max_pct"] <= 50.0


def test_step_physics_slower_after_compute_with_a_quiet_network_points_at_input() -> None:
    """Step time grew, compute did not (the wait is timed inside the step, so it reads as time
    after compute), no straggler, the network is quiet, and the hosts wait on I/O: input, not NCCL."""
    quiet = [
        {
            "id": "ev-2",
            "tool": "nic_counters",
            "status": "ok",
            "covered": ["h/mlx5_0", "h"],
            "summary": "n",
            "args": {},
            "signals": [],
        },
        _rec(3, "job_logs", []),
        _rec(4, "input_pipeline", ["io_pressure_high"]),
    ]
    obs = observe([_rec(1, "job_steps", ["job_slowdown", "slowdown_in_comm"]), *quiet])
    top = beliefs(G, obs)[0]
    assert (top.root_cause, top.confirmed) == ("input_pipeline_stall", False)
    # the same steps with NCCL on sockets: the configuration, not the input
    obs = observe(
        [
            _rec(1, "job_steps", ["job_slowdown", "slowdown_in_comm"]),
            _rec(3, "job_logs", ["nccl_socket_transport"]),
            _rec(4, "input_pipeline", []),
        ]
    )
    assert beliefs(G, obs)[0].root_cause == "nccl_misconfiguration"
