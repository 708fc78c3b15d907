"""Input stalls in several frameworks' wordings, and slowdowns the job explains."""

from __future__ import annotations

import pytest
from forensic.harness.failure_graph import beliefs, default_graph, observe
from forensic.tools._trainer_log import TrainerFacts

from tests.tools.test_fabric_tools import run

STALLS = {
    "pytorch": "RuntimeError: DataLoader timed out after 600 seconds",
    "pytorch-worker": "RuntimeError: DataLoader worker (pid 4242) is killed by signal: Killed.",
    "megatron": " batch-generator ...........................: (12034.55, 12990.12)",
    "deepspeed": "[WARNING] [engine.py:2041] dataloader is slow: rank 3 starved for 4.2s",
    "lightning": "UserWarning: fetching next batch took 3.9s; the train_dataloader may stall training",
    "ray": "(SplitCoordinator) Ray Data is applying backpressure: waiting for 12 blocks",
    "prefetch": "prefetch queue empty for 30 consecutive steps",
}
STORAGE = {
    "s3": "botocore.exceptions.ClientError: An error occurred (SlowDown) when calling GetObject: Please reduce your request rate.",
    "nfs": "kernel: nfs: server fs01.dc3 not responding, still trying",
    "lustre": "LustreError: 11-0: scratch-OST0004-osc: operation ost_read to node 10.1.0.4@o2ib timed out",
    "gcs": "gcsfuse: ReadFile: retrying after 429 TooManyRequests",
}


@pytest.mark.parametrize("name", sorted(STALLS))
def test_each_framework_wording_is_an_input_stall(name: str) -> None:
    t = TrainerFacts()
    t.add_text(STALLS[name] + "\n")
    assert len(t.stalls) == 1, name


@pytest.mark.parametrize("name", sorted(STORAGE))
def test_each_storage_client_wording_is_storage_trouble(name: str) -> None:
    t = TrainerFacts()
    t.add_text(STORAGE[name] + "\n")
    assert len(t.storage) == 1, name


def test_ordinary_training_lines_are_not_stalls() -> None:
    t = TrainerFacts()
    t.add_text(
        "step 100 | loss 2.31 | step_time 0.912s | data_time 0.004s | tok/s 143210\n"
        "NCCL INFO NET/IB : Using [0]mlx5_0:1/IB\nDataLoader created with 8 workers\n"
    )
    assert not t.stalls and not t.storage


def test_a_relaunch_with_a_bigger_batch_and_the_same_tokens_per_second_is_explained() -> None:
    t = TrainerFacts()
    t.add_text(
        "args: global_batch_size=1024 seq_length=4096\n"
        + "".join(f"step {i} | step_time 0.900s | tok/s 4660000\n" for i in range(5))
        + "args: global_batch_size=2048 seq_length=4096\n"
        + "".join(f"step {i} | step_time 1.790s | tok/s 4685000\n" for i in range(5))
    )
    rc = t.reconfiguration()
    assert rc is not None and "global_batch_size 1024 -> 2048" in rc["changed"] and rc["work_ratio"] > 0.99


def test_a_relaunch_that_also_lost_throughput_is_not_explained() -> None:
    t = TrainerFacts()
    t.add_text(
        "global batch size: 1024\n"
        + "throughput: 4,600,000 tokens/s\n" * 3
        + "global batch size: 2048\n"
        + "throughput: 3,100,000 tokens/s\n" * 3
    )
    assert t.reconfiguration() is None
    # the same work per step on both sides: no reconfiguration at all
    same = TrainerFacts()
    same.add_text("global_batch_size=1024\nstep_time 0.9s\nglobal_batch_size=1024\nstep_time 1.4s\n")
    assert same.reconfiguration() is None


def test_job_logs_turn_trainer_lines_into_signals_and_belief(make_fabric_bundle) -> None:
    root = make_fabric_bundle(None)
    log = root / "job" / "logs" / "rank0.log"
    log.write_text(
        log.read_text()
        + "".join(f"[rank0] RuntimeError: DataLoader timed out after 600 seconds ({i})\n" for i in range(4))
    )
    res = run(root, "job_logs")
    assert [s.name for s in res.signals if s.kind == "job" and s.name != "nccl_fast_path"] == [
        "input_stall_logged"
    ]
    g = default_graph()
    rec = {
        "id": "ev-1",
        "tool": "job_logs",
        "status": "ok",
        "signals": [s.model_dump() for s in res.signals],
        "covered": ["job"],
    }
    # no compute_s: job_steps sees the job slow down but cannot say where the time went
    slow = {
        "id": "ev-2",
        "tool": "job_steps",
        "status": "ok",
        "covered": ["job"],
        "signals": [
            {"name": n, "component": "job", "kind": "job", "detail": "", "values": {}}
            for n in ("job_slowdown", "slowdown_unattributed")
        ],
    }
    assert beliefs(g, observe([slow]))[0].root_cause != "input_pipeline_stall"
    top = beliefs(g, observe([slow, rec]))[0]
    assert (top.root_cause, top.component, top.confirmed) == ("input_pipeline_stall", "job", True)


def test_an_explained_slowdown_keeps_healthy_ahead() -> None:
    g = default_graph()
    slow = {
        "id": "ev-1",
        "tool": "job_steps",
        "status": "ok",
        "covered": ["job"],
        "signals": [{"name": "job_slowdown", "component": "job", "kind": "job", "detail": "", "values": {}}],
    }
    reconf = {
        "id": "ev-2",
        "tool": "job_logs",
        "status": "ok",
        "covered": ["job"],
        "signals": [
            {"name": "job_reconfigured", "component": "job", "kind": "job", "detail": "", "values": {}}
        ],
    }
    before = next(h for h in beliefs(g, observe([slow])) if h.root_cause == "healthy").score
    after = next(h for h in beliefs(g, observe([slow, reconf])) if h.root_cause == "healthy")
    assert after.score > before and beliefs(g, observe([slow, reconf]))[0].root_cause == "healthy"


# -- item 5: slow from the first step --------------------------------------------------------------


def test_incident_text_states_the_expected_step_time_and_the_onset() -> None:
    from forensic.tools._incident_text import expected_step_s, slow_from_start

    assert expected_step_s("MFU low; it used to do 0.9 s per step") == 0.9
    assert expected_step_s("step time was 900 ms before the upgrade") == 0.9
    assert expected_step_s("MFU 42% (was 49%)") is None  # a percentage is not a step time
    assert slow_from_start("70b run slow since launch, never reached expected MFU")
    assert not slow_from_start("MFU down from 51% to 37% since 02:10")


@pytest.mark.parametrize(
    "text",
    [
        "throughput 40% below plan all day",
        "all-reduce bandwidth 30% below baseline on the new allocation",
        "job degraded; no XIDs",
        "15% slower than the same config on the old allocation",
        "tokens/s lower than expected",
    ],
)
def test_a_shortfall_against_a_level_with_no_onset_is_not_refuted_by_flat_steps(text: str) -> None:
    """Steps flat inside the window say nothing about a job below its plan or baseline for all of it."""
    from forensic.tools._incident_text import slow_from_start

    assert slow_from_start(text)


@pytest.mark.parametrize(
    "text",
    [
        "step time jumped after the 01:53 restart; was something degraded?",
        "degraded since 04:10",
        "30% below baseline since the maintenance",
        "slower since ~20:25",
        "Is the cluster OK?",
    ],
)
def test_a_change_with_an_onset_is_looked_for_in_the_window(text: str) -> None:
    from forensic.tools._incident_text import slow_from_start

    assert not slow_from_start(text)


def test_a_job_slower_than_stated_from_its_first_step_is_a_slowdown(make_bundle) -> None:
    import json

    root = make_bundle(None)
    inc = json.loads((root / "incident.json").read_text())
    # the unit bundle's steps take ~1.2 s each: flat, no onset
    inc.update(title="pretrain slow since launch", reported="It used to do 0.9 s per step on this cluster.")
    (root / "incident.json").write_text(json.dumps(inc))
    res = run(root, "job_steps")
    names = {s.name for s in res.signals}
    assert {"job_slowdown", "slowdown_unattributed"} <= names and "steps_clean" not in names
    inc.update(reported="")  # slow since launch, no number: no slowdown claimed, and no health either
    (root / "incident.json").write_text(json.dumps(inc))
    assert not {s.name for s in run(root, "job_steps").signals} & {
        "steps_clean",
        "job_steady",
        "job_slowdown",
    }


def test_p2p_disabled_is_a_slow_path_by_configuration(make_fabric_bundle) -> None:
    root = make_fabric_bundle(None)
    log = root / "job" / "logs" / "rank0.log"
    log.write_text(
        "node-a.example:1001:1101 [0] NCCL INFO NCCL_P2P_DISABLE set by environment to 1.\n" + log.read_text()
    )
    res = run(root, "job_logs")
    assert [s.name for s in res.signals] == ["nccl_p2p_disabled"]
    g = default_graph()
    rec = {
        "id": "ev-1",
        "tool": "job_logs",
        "status": "ok",
        "signals": [s.model_dump() for s in res.signals],
        "covered": ["job"],
    }
    h = next(h for h in beliefs(g, observe([rec])) if h.root_cause == "nccl_misconfiguration")
    assert h.required_met
