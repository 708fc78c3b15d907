"""A slowdown the job explains itself, judged by work per GPU per second.

A relaunch with a larger global batch, longer sequences, a new data mix or another parallel layout
makes each step longer while the work per GPU per second holds. Each framework prints its
configuration and its rate in its own words; every wording below is read, and the same relaunch
with a lost rate is *not* explained (so none of these tests pass by accepting everything).
"""

from __future__ import annotations

import json

import pytest
from forensic.harness.failure_graph import beliefs, default_graph, observe
from forensic.harness.health import check_healthy
from forensic.tools._incident_text import stated_reconfiguration
from forensic.tools._trainer_log import TrainerFacts

from tests.tools.test_fabric_tools import run


def _megatron_tflops(gbs: int, ms: float, tflops: float) -> list[str]:
    head = [
        "using world size: 128, data-parallel size: 16, context-parallel size: 1, tensor-model-parallel size: 8, "
        "pipeline-model-parallel size: 1",
        "------------------------ arguments ------------------------",
        f"  global_batch_size ............................... {gbs}",
        "  micro_batch_size ................................ 4",
        "  seq_length ...................................... 4096",
        "-------------------- end of arguments ---------------------",
    ]
    return head + [
        f" [2026-04-22 02:{10 + i}:00] iteration {96400 + 50 * i:>8}/  500000 | consumed samples: {i * gbs:>12} | "
        f"elapsed time per iteration (ms): {ms:.1f} | throughput per GPU (TFLOP/s/GPU): {tflops:.1f} | "
        f"global batch size: {gbs:>5} | lm loss: 2.2E+00 |"
        for i in range(4)
    ]


def _megatron_tokens(seq: int, tps: float) -> list[str]:
    return [f"  seq-length {seq}"] + [
        f"iteration {i}/1000 | elapsed time per iteration (ms): {seq / 4.0:.1f} | tokens per sec: {tps:.0f}"
        for i in range(4)
    ]


def _deepspeed(seq: int, sps: float) -> list[str]:
    # samples/s at twice the sequence length is the same token rate at half the samples
    return [
        "[INFO] [config.py:1000:print]   train_batch_size ............. 1536",
        f"[INFO] [config.py:1000:print]   seq_length ............. {seq}",
    ] + [
        f"[INFO] [timer.py:260:stop] epoch=0/micro_step={i * 4}/global_step={i}, RunningAvgSamplesPerSec={sps:.1f}, "
        f"CurrSamplesPerSec={sps:.1f}, MemAllocated=61.2GB"
        for i in range(1, 5)
    ]


def _hf(total: int, sps: float) -> list[str]:
    return [
        "***** Running training *****",
        "  Num examples = 1,000,000",
        "  Instantaneous batch size per device = 8",
        f"  Total train batch size (w. parallel, distributed & accumulation) = {total}",
        "  Gradient Accumulation steps = 4",
        "{'loss': 2.1, 'learning_rate': 2e-05, 'epoch': 0.1}",
        f"{{'train_runtime': 1000.1, 'train_samples_per_second': {sps}, 'train_steps_per_second': {sps / total:.4f}, 'epoch': 1.0}}",
    ]


def _nemo(seq: int, dur: float, tps: float) -> list[str]:
    return [
        "[NeMo I 2026-05-14 08:29:10 train:58] Config:",
        "model:",
        f"  encoder_seq_length: {seq}",
        "  global_batch_size: 80",
        "  data:",
        f"    seq_length: {seq}",
    ] + [
        f"Epoch 0:   5%| | {280 * i}/5000 [04:40<, {1 / dur:.2f}it/s, v_num=3, global_step={280 * i}.0, "
        f"train_step_timing in s={dur:.3f}, tokens_per_sec_per_gpu={tps:.0f}]"
        for i in range(1, 5)
    ]


def _composer(gbs: int, tps: float) -> list[str]:
    return [f"global_train_batch_size: {gbs}", "max_seq_len: 2048"] + [
        f"[batch={i}/1000]: Train throughput/device/tokens_per_sec: {tps:.1f}  Train throughput/samples_per_sec: {tps * 8 / 2048:.1f}"
        for i in range(1, 5)
    ]


def _torchtitan(seq: int, tps: float) -> list[str]:
    return [
        f"[titan] INFO - Starting job: llama3 8B training, --training.seq_len {seq} --training.local_batch_size 2"
    ] + [
        f"[titan] 2026-01-01 10:00:0{i},000 - root - INFO - step: {i * 10}  loss:  8.1234  memory: 30.12GiB(38.05%)  "
        f"tps: {tps:,.0f}  tflops: {tps / 17:.2f}  mfu: {tps / 170:.2f}%"
        for i in range(1, 5)
    ]


def _jsonl(mix: str, tps: float) -> list[str]:
    return [json.dumps({"event": "config", "data_mix": mix, "global_batch_size": 512, "seq_len": 4096})] + [
        json.dumps({"step": i, "tokens_per_sec": tps, "loss": 2.0}) for i in range(4)
    ]


def _torchrun(tp: int, toks: float) -> list[str]:
    # the same 64 GPUs in another layout; the total rate over the same world is the per-GPU rate
    return [
        f"torchrun --nnodes 8 --nproc_per_node 8 pretrain.py --world-size 64 --tensor-model-parallel-size {tp} --seq-length 4096"
    ] + [f"step {i} | loss 2.31 | step_time 0.912s | tok/s {toks:.0f}" for i in range(4)]


def _lightning_no_rate(seq: int, s_per_it: float) -> list[str]:
    # no rate printed at all: the step time may grow by no more than the work per step
    return [f"model.seq_length={seq}", "GPU available: True (cuda), used: True"] + [
        f"Epoch 0:  10%|#         | {100 * i}/1000 [01:40<15:00, {s_per_it:.2f}s/it, loss=2.1]"
        for i in range(1, 5)
    ]


def _per_gpu_first(seq: int, batch_tokens: int, step_s: float, rate: float) -> list[str]:
    # key=value lines with the device before the second ("tok_per_gpu_s") and the batch in tokens
    return [
        f"[2026-03-01 04:00:00] run config: seq_len={seq} global_batch_tokens={batch_tokens} data_mix=web:0.8,code:0.2"
    ] + [
        f"[2026-03-01 04:0{i}:00] step={100 * i} step_s={step_s:.2f} tok_per_gpu_s={rate:.0f} loss=2.2"
        for i in range(1, 5)
    ]


def _tokens_per_step_no_rate(seq: int, batch_tokens: int, s_per_step: float) -> list[str]:
    # the work of a step in tokens beside its length: counted once, not twice
    return [f"seq_len: {seq}", f"tokens per batch: {batch_tokens:,}"] + [
        f"iter {i}: loss 2.0, sec_per_step: {s_per_step:.2f}" for i in range(1, 5)
    ]


#: wording -> (before, after with the rate held, after with the rate lost)
WORDINGS = {
    "per-gpu-first": (
        _per_gpu_first(4096, 4194304, 2.15, 40600.0),
        _per_gpu_first(8192, 8388608, 4.0, 43700.0),
        _per_gpu_first(8192, 8388608, 5.6, 31000.0),
    ),
    "tokens-per-step-no-rate": (
        _tokens_per_step_no_rate(4096, 4194304, 2.0),
        _tokens_per_step_no_rate(8192, 8388608, 3.9),
        _tokens_per_step_no_rate(8192, 8388608, 2.9 * 2.0),
    ),
    "megatron-tflops": (
        _megatron_tflops(1024, 885.0, 401.7),
        _megatron_tflops(1536, 1193.0, 402.3),
        _megatron_tflops(1536, 1600.0, 300.1),
    ),
    "megatron-tokens": (
        _megatron_tokens(4096, 9.1e6),
        _megatron_tokens(8192, 9.0e6),
        _megatron_tokens(8192, 6.2e6),
    ),
    "deepspeed": (_deepspeed(4096, 142.3), _deepspeed(8192, 71.4), _deepspeed(8192, 50.2)),
    "hf-trainer": (_hf(512, 51.2), _hf(1024, 51.0), _hf(1024, 33.0)),
    "nemo": (_nemo(4096, 1.0, 4096), _nemo(8192, 1.89, 4334), _nemo(8192, 2.6, 3150)),
    "composer": (_composer(256, 4123.5), _composer(512, 4101.0), _composer(512, 2800.0)),
    "torchtitan": (_torchtitan(4096, 5421), _torchtitan(8192, 5380), _torchtitan(8192, 3900)),
    "jsonl-data-mix": (
        _jsonl("web70-code30", 263904.0),
        _jsonl("web50-code50", 262000.0),
        _jsonl("web50-code50", 190000.0),
    ),
    "torchrun-layout": (_torchrun(4, 143210.0), _torchrun(8, 142000.0), _torchrun(8, 99000.0)),
    "lightning-no-rate": (
        _lightning_no_rate(2048, 1.0),
        _lightning_no_rate(4096, 1.98),
        _lightning_no_rate(4096, 2.9),
    ),
}


@pytest.mark.parametrize("wording", sorted(WORDINGS))
def test_a_relaunch_with_more_work_and_the_same_rate_is_explained_in_every_wording(wording: str) -> None:
    before, held, lost = WORDINGS[wording]
    t = TrainerFacts()
    t.add_lines(before + ["[exiting program after receiving SIGTERM.]"] + held)
    rc = t.reconfiguration()
    assert rc is not None, wording
    assert " -> " in str(rc["changed"]) and float(rc["work_ratio"]) >= 0.95
    worse = TrainerFacts()
    worse.add_lines(before + lost)
    assert worse.reconfiguration() is None, wording  # the rate fell: the relaunch does not explain the step


def test_per_gpu_work_is_judged_over_a_changed_world_size() -> None:
    def run_(world: int, toks: float) -> list[str]:
        return [f"world_size: {world}", "global_batch_size: 1024"] + [
            f"step {i} | tokens/s: {toks:.0f}" for i in range(3)
        ]

    grown = TrainerFacts()  # twice the GPUs, twice the total rate: the same work per GPU per second
    grown.add_lines(run_(64, 1.0e6) + run_(128, 1.98e6))
    rc = grown.reconfiguration()
    assert (
        rc is not None
        and "world_size 64 -> 128" in str(rc["changed"])
        and rc["work_ratio"] == pytest.approx(0.99)
    )
    flat = TrainerFacts()  # twice the GPUs for the same total rate: each GPU does half the work
    flat.add_lines(run_(64, 1.0e6) + run_(128, 1.0e6))
    assert flat.reconfiguration() is None


def test_without_configuration_lines_the_rate_must_hold_while_the_step_grew() -> None:
    lines = [
        f"step {i} | step_time {0.9 if i < 8 else 1.8:.1f}s | tokens_per_sec_per_gpu: {4100 + i}"
        for i in range(16)
    ]
    t = TrainerFacts()
    t.add_lines(lines)
    rc = t.reconfiguration()
    assert rc is not None and "step time grew 2.00x" in str(rc["basis"])
    slower = TrainerFacts()  # the step grew and the rate fell with it: a fault's shape, not the job's doing
    slower.add_lines(
        [
            f"step {i} | step_time {0.9 if i < 8 else 1.8:.1f}s | tokens_per_sec_per_gpu: {4100 if i < 8 else 2050}"
            for i in range(16)
        ]
    )
    assert slower.reconfiguration() is None
    waited = TrainerFacts()  # a rate timed over compute alone holds through an input stall: not explained
    waited.add_lines(lines[:12] + ["RuntimeError: DataLoader timed out after 600 seconds"] + lines[12:])
    assert waited.reconfiguration() is None
    flat = TrainerFacts()  # nothing changed at all: nothing to explain, and no health claimed from it
    flat.add_lines([f"step {i} | step_time 0.9s | tokens_per_sec_per_gpu: 4100" for i in range(16)])
    assert flat.reconfiguration() is None


def test_the_incidents_own_words_name_the_change_but_the_rate_must_hold() -> None:
    text = "The fine-tune was relaunched at 09:20 with the long-context recipe. Iterations now take almost twice as long."
    stated = stated_reconfiguration(text)
    assert stated and "long-context" in stated
    for said in (
        "Job resubmitted with a larger global batch; steps are slower",
        "restarted with global batch 1024 -> 1536",
        "new data mix since the restart",
        "relaunched on a different parallel layout (TP 8 instead of 4)",
    ):
        assert stated_reconfiguration(said), said
    for not_said in (
        "Restarted after the NCCL upgrade; slower",
        "The job restarted itself twice (torch elastic). Now running but slower.",
        "gpt-52b was restarted from checkpoint at 02:40 after a node drain; each iteration takes 1.2 s",
    ):
        assert stated_reconfiguration(not_said) is None, not_said
    rate_only = [f"step: {10 * i}  loss: 8.1  tps: {5400 + i}  mfu: 31.8%" for i in range(8)]
    t = TrainerFacts()
    t.add_lines(rate_only)
    assert t.reconfiguration() is None  # the rate alone says nothing changed
    assert t.reconfiguration(stated) is not None
    dropped = TrainerFacts()
    dropped.add_lines(
        rate_only[:4] + [f"step: {10 * i}  loss: 8.1  tps: 3900  mfu: 22.9%" for i in range(4, 8)]
    )
    assert dropped.reconfiguration(stated) is None  # a claim never stands in for the measurement
    assert TrainerFacts().reconfiguration(stated) is None  # nor does silence


ROUTINE = [
    "UserWarning: This DataLoader will create 16 worker processes in total. Our suggested max number of worker in current system "
    "is 8, which is smaller than what this DataLoader is going to create. Please be aware that excessive worker creation might get "
    "DataLoader running slow or even freeze, lower the worker number to avoid potential slowness/freeze if necessary.",
    "[INFO] [logging.py:96:log_dist] [Rank 0] Saving model checkpoint: /ckpt/global_step1000/mp_rank_00_model_states.pt; "
    "data loading paused, timed out waiting for the next batch",
    "saving checkpoint at iteration 2000 to /ckpt took 31.2 s; dataloader wait during save",
]


@pytest.mark.parametrize("line", ROUTINE, ids=["worker-count", "deepspeed-save", "megatron-save"])
def test_lines_normal_in_healthy_runs_are_not_input_stalls(line: str) -> None:
    t = TrainerFacts()
    t.add_lines([line])
    assert not t.stalls


def _rec(i: int, tool: str, names: list[str]) -> dict:
    return {
        "id": f"ev-{i}",
        "tool": tool,
        "status": "ok",
        "covered": ["job"],
        "signals": [{"name": n, "component": "job", "kind": "job", "detail": n, "values": {}} for n in names],
    }


@pytest.mark.parametrize("where", ["slowdown_in_compute", "slowdown_unattributed"])
def test_a_weak_input_hint_does_not_keep_an_explained_fleet_from_healthy(where: str) -> None:
    g = default_graph()
    quiet = [
        _rec(3, "nic_counters", []),
        _rec(4, "input_pipeline", []),
        _rec(5, "metrics", []),
        _rec(6, "gpu_health", []),
    ]
    obs = observe(
        [
            _rec(1, "job_steps", ["job_slowdown", where]),
            _rec(2, "job_logs", ["job_reconfigured", "input_stall_hint"]),
            *quiet,
        ]
    )
    hyps = beliefs(g, obs)
    assert (
        hyps[0].root_cause == "healthy" and check_healthy(g, obs, "step time up 35% after the restart").earned
    )
    stall = next(h for h in hyps if h.root_cause == "input_pipeline_stall")
    alone = next(
        h
        for h in beliefs(
            g,
            observe(
                [
                    _rec(1, "job_steps", ["job_slowdown", where]),
                    _rec(2, "job_logs", ["input_stall_hint"]),
                    *quiet,
                ]
            ),
        )
        if h.root_cause == "input_pipeline_stall"
    )
    assert stall.score < alone.score  # the held rate speaks against an input stall too
    # the same hint without the explanation: not healthy (a reported slowdown stays unexplained)
    unexplained = observe(
        [_rec(1, "job_steps", ["job_slowdown", where]), _rec(2, "job_logs", ["input_stall_hint"]), *quiet]
    )
    assert not check_healthy(g, unexplained, "step time up 35% after the restart").earned


def test_job_logs_read_a_relaunch_from_a_bundle_and_the_incident_text(make_fabric_bundle) -> None:
    root = make_fabric_bundle(None)
    log = root / "job" / "logs" / "rank0.log"
    before, held, _ = WORDINGS["nemo"]
    log.write_text(log.read_text() + "\n".join(before + held) + "\n")
    sig = [s for s in run(root, "job_logs").signals if s.name == "job_reconfigured"]
    assert sig and "seq_length 4096 -> 8192" in sig[0].detail and "tokens per GPU" in sig[0].detail
    # torchtitan prints only its rate: the change is named by the incident's own words
    root2 = root
    (root2 / "job" / "logs" / "rank0.log").write_text(
        "\n".join(f"step: {10 * i}  loss: 8.1  tps: {5400 + i}  mfu: 31.8%" for i in range(8))
    )
    assert not [s for s in run(root2, "job_logs").signals if s.name == "job_reconfigured"]
    inc = json.loads((root2 / "incident.json").read_text())
    inc["reported"] = "Relaunched at 09:20 with sequence length 4096 -> 8192; steps take twice as long."
    (root2 / "incident.json").write_text(json.dumps(inc))
    assert [s for s in run(root2, "job_logs").signals if s.name == "job_reconfigured"]
