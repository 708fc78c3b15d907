"""Issue 11 items 6-7: input stalls in several frameworks' wordings, and slowdowns the job explains."""

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
    t.add_text("step 100 | loss 2.31 | step_time 0.912s | data_time 0.004s | tok/s 143210\n"
               "NCCL INFO NET/IB : Using [0]mlx5_0:1/IB\nDataLoader created with 8 workers\n")
    assert not t.stalls and not t.storage


def test_a_relaunch_with_a_bigger_batch_and_the_same_tokens_per_second_is_explained() -> None:
    t = TrainerFacts()
    t.add_text("args: global_batch_size=1024 seq_length=4096\n"
               + "".join(f"step {i} | step_time 0.900s | tok/s 4660000\n" for i in range(5))
               + "args: global_batch_size=2048 seq_length=4096\n"
               + "".join(f"step {i} | step_time 1.790s | tok/s 4685000\n" for i in range(5)))
    rc = t.reconfiguration()
    assert rc is not None and "global_batch_size 1024 -> 2048" in rc["changed"] and rc["work_ratio"] > 0.99


def test_a_relaunch_that_also_lost_throughput_is_not_explained() -> None:
    t = TrainerFacts()
    t.add_text("global batch size: 1024\n" + "throughput: 4,600,000 tokens/s\n" * 3
               + "global batch size: 2048\n" + "throughput: 3,100,000 tokens/s\n" * 3)
    assert t.reconfiguration() is None
    # the same work per step on both sides: no reconfiguration at all
    same = TrainerFacts()
    same.add_text("global_batch_size=1024\nstep_time 0.9s\nglobal_batch_size=1024\nstep_time 1.4s\n")
    assert same.reconfiguration() is None


def test_job_logs_turn_trainer_lines_into_signals_and_belief(make_fabric_bundle) -> None:
    root = make_fabric_bundle(None)
    log = root / "job" / "logs" / "rank0.log"
    log.write_text(log.read_text() + "".join(f"[rank0] RuntimeError: DataLoader timed out after 600 seconds ({i})\n" for i in range(4)))
    res = run(root, "job_logs")
    assert [s.name for s in res.signals if s.kind == "job"] == ["input_stall_logged"]
    g = default_graph()
    rec = {"id": "ev-1", "tool": "job_logs", "status": "ok", "signals": [s.model_dump() for s in res.signals], "covered": ["job"]}
    # no compute_s: job_steps sees the job slow down but cannot say where the time went
    slow = {"id": "ev-2", "tool": "job_steps", "status": "ok", "covered": ["job"],
            "signals": [{"name": n, "component": "job", "kind": "job", "detail": "", "values": {}}
                        for n in ("job_slowdown", "slowdown_unattributed")]}
    assert beliefs(g, observe([slow]))[0].root_cause != "input_pipeline_stall"
    top = beliefs(g, observe([slow, rec]))[0]
    assert (top.root_cause, top.component, top.confirmed) == ("input_pipeline_stall", "job", True)


def test_an_explained_slowdown_keeps_healthy_ahead() -> None:
    g = default_graph()
    slow = {"id": "ev-1", "tool": "job_steps", "status": "ok", "covered": ["job"],
            "signals": [{"name": "job_slowdown", "component": "job", "kind": "job", "detail": "", "values": {}}]}
    reconf = {"id": "ev-2", "tool": "job_logs", "status": "ok", "covered": ["job"],
              "signals": [{"name": "job_reconfigured", "component": "job", "kind": "job", "detail": "", "values": {}}]}
    before = next(h for h in beliefs(g, observe([slow])) if h.root_cause == "healthy").score
    after = next(h for h in beliefs(g, observe([slow, reconf])) if h.root_cause == "healthy")
    assert after.score > before and beliefs(g, observe([slow, reconf]))[0].root_cause == "healthy"
