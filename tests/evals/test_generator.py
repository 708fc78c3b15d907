"""The incident generator writes valid bundles whose physics holds, deterministically."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from collections import Counter
from pathlib import Path

import pytest
from forensic.evals.generator import CAUSES, EXAMPLES, HOLDOUT, INCIDENTS, IncidentSpec, generate
from forensic.evals.generator.check import load_steps, rank_placement, read_text, straggler_stats
from forensic.evals.generator.incident import build
from forensic.evals.sets import ensure_set

ROOT = Path(__file__).resolve().parents[2] / "evals"
# The examples are committed; the incident sets are regenerated (and checked against their
# manifest) on first use.
INCIDENT_SET = ensure_set("incidents")
COMMITTED = sorted(
    [p.parent for p in (ROOT / "examples").glob("*/truth.json")]
    + [p.parent for p in INCIDENT_SET.glob("*/truth.json")]
    + [p.parent for p in (INCIDENT_SET / "holdout").glob("*/truth.json")]
)
STEPS_HEADER = ["step", "rank", "start_unix", "duration_s"]


def _tree_digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _check_component(bundle: Path, truth: dict) -> None:
    comp = truth["component"]
    cause = truth["root_cause"]
    assert cause in CAUSES
    if cause == "healthy":
        assert comp is None
        return
    if cause in ("input_pipeline_stall", "nccl_misconfiguration"):
        assert comp == "job"
        return
    topo_path = bundle / "topology.json"
    topo = json.loads(read_text(topo_path if topo_path.exists() else bundle / "topology.json.gz"))
    hosts = {h["name"]: h for h in topo["hosts"]}
    if cause == "ecmp_hash_polarization":
        assert comp in {s["name"] for s in topo["switches"] if s["tier"] == "leaf"}
        return
    if cause == "host_contention":
        assert comp in hosts
        return
    host, _, dev = comp.rpartition("/")
    assert host in hosts, comp
    if cause in ("pfc_pause_storm", "link_degradation") or dev.startswith("mlx5_"):
        assert dev in {n["ibdev"] for n in hosts[host]["nics"]}
    else:
        assert re.fullmatch(r"gpu[0-7]", dev), comp
        # the faulty GPU holds a rank of the job
        place = rank_placement(bundle)
        assert (host, int(dev[3:])) in set(place.values())


@pytest.mark.parametrize("case", COMMITTED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_committed_bundle_is_valid(case: Path) -> None:
    bundle = case / "bundle"
    truth = json.loads((case / "truth.json").read_text())
    inc = json.loads((bundle / "incident.json").read_text())
    assert inc["schema"] == "forensic.bundle/v1"
    assert set(inc) >= {"schema", "id", "title", "window", "job"}
    assert inc["window"]["start"].endswith("Z") and inc["window"]["end"] > inc["window"]["start"]
    assert inc["job"]["gpus_per_node"] == 8 and inc["job"]["ranks"] % 8 == 0
    # titles speak of symptoms only, never of the answer
    words = {w for c in CAUSES for w in c.split("_") if len(w) > 4} - {"throttle", "stall"}
    assert not any(
        w in (inc["title"] + inc["reported"]).lower()
        for w in (
            "throttl",
            "pcie",
            "thermal",
            "nvlink",
            "ecmp",
            "polariz",
            "hbm",
            "corrupt",
            "misconfig",
            "contention",
            "pause",
            "downtrain",
        )
    ), inc["title"]
    assert truth["root_cause"] not in inc["id"] and all(w not in inc["id"] for w in words)
    _check_component(bundle, truth)
    header, num, _raw = load_steps(bundle)
    assert header[:4] == STEPS_HEADER
    assert len(num) > 0
    for p in (bundle / "metrics").glob("*"):
        assert read_text(p).endswith("# EOF\n"), p
    for p in list((bundle / "nodes").glob("*/nvml.json*")) + list(bundle.glob("*.json*")):
        json.loads(read_text(p))
    for p in (bundle / "nodes").glob("*/cmd/*.gz"):
        gzip.decompress(p.read_bytes())


def test_examples_and_incident_sets_cover_every_cause() -> None:
    assert {s.cause for s in EXAMPLES} >= {
        "pcie_downtrain",
        "thermal_throttle",
        "power_throttle",
        "gpu_fell_off_bus",
        "hbm_degradation",
        "healthy",
    }
    tune, hold = Counter(s.cause for s in INCIDENTS), Counter(s.cause for s in HOLDOUT)
    for cause in CAUSES:
        assert tune[cause] >= 2 and hold[cause] >= 1, cause
    assert tune["healthy"] + hold["healthy"] >= 5
    assert len(INCIDENTS) + len(HOLDOUT) >= 44
    assert {s.hosts for s in INCIDENTS + HOLDOUT} >= {8, 64}
    # the holdout looks different: naming schemes the tuning set never uses
    assert not {s.opts["host_scheme"] for s in HOLDOUT} & {s.opts["host_scheme"] for s in INCIDENTS}
    assert all(re.fullmatch(r"case-\d{3}", s.case) for s in INCIDENTS + HOLDOUT)


def test_straggler_physics(tmp_path: Path) -> None:
    spec = IncidentSpec(case="phys", cause="thermal_throttle", seed=42, hosts=8, opts={"col_compute": True})
    s = generate(spec, tmp_path)
    scn = build(spec)
    st = straggler_stats(tmp_path / "phys" / "bundle", s["truth"], t_from=scn.tf + 900)
    assert st["steps"] > 10
    assert st["max_compute_frac"] >= 0.9 and st["min_wait_frac"] >= 0.9
    # the barrier equalizes step time across ranks
    assert st["max_duration_spread"] < 0.01


def test_subtle_straggler_still_physical(tmp_path: Path) -> None:
    spec = IncidentSpec(
        case="subtle",
        cause="power_throttle",
        seed=9,
        hosts=16,
        variant="cap",
        opts={"col_compute": True, "severity": 1.04},
    )
    s = generate(spec, tmp_path)
    st = straggler_stats(tmp_path / "subtle" / "bundle", s["truth"], t_from=build(spec).tf + 600)
    assert st["max_compute_frac"] >= 0.8


def test_hang_stops_steps_and_every_rank_times_out_on_one_seq(tmp_path: Path) -> None:
    spec = IncidentSpec(case="hang", cause="gpu_fell_off_bus", seed=5, hosts=8, opts={"torch_style": "2.5"})
    generate(spec, tmp_path)
    b = tmp_path / "hang" / "bundle"
    scn = build(spec)
    _h, num, _ = load_steps(b)
    assert num[:, 2].max() < scn.tf
    logs = "".join(read_text(p) for p in (b / "job" / "logs").iterdir())
    seqs = set(re.findall(r"Watchdog caught collective operation timeout: WorkNCCL\(SeqNum=(\d+)", logs))
    assert len(seqs) == 1
    host, gpu = s_comp = scn.truth["component"].split("/gpu")
    nvml = json.loads(read_text(next((b / "nodes" / host).glob("nvml.json*"))))
    assert any(d.get("error") == "GPU is lost" and d["index"] == int(gpu) for d in nvml["devices"])
    assert s_comp


def test_sdc_one_replica_disagrees(tmp_path: Path) -> None:
    spec = IncidentSpec(case="sdc", cause="silent_data_corruption", seed=8, hosts=8, opts={"tp": 2})
    generate(spec, tmp_path)
    b = tmp_path / "sdc" / "bundle"
    scn = build(spec)
    header, num, raw = load_steps(b)
    ci = header.index("param_checksum")
    bad = scn.job.sdc_rank
    late = [i for i in range(len(num)) if num[i, 2] > scn.tf + 60]
    by_step: dict[int, dict[int, str]] = {}
    for i in late:
        by_step.setdefault(int(num[i, 0]), {})[int(num[i, 1])] = raw[i][ci]
    for ranks in by_step.values():
        if bad not in ranks:
            continue
        peers = {v for r, v in ranks.items() if r % 2 == bad % 2 and r != bad}
        assert len(peers) == 1 and ranks[bad] not in peers
    assert not any(x.t >= scn.t0 for g in scn.gpus.values() for x in g.xids if g.in_job)


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    spec = IncidentSpec(case="det", cause="pfc_pause_storm", seed=77, hosts=8)
    generate(spec, tmp_path / "a")
    generate(spec, tmp_path / "b")
    assert _tree_digest(tmp_path / "a" / "det") == _tree_digest(tmp_path / "b" / "det")
    other = IncidentSpec(case="det", cause="pfc_pause_storm", seed=78, hosts=8)
    generate(other, tmp_path / "c")
    assert _tree_digest(tmp_path / "a" / "det") != _tree_digest(tmp_path / "c" / "det")


@pytest.mark.parametrize("spec", EXAMPLES + [INCIDENTS[0], HOLDOUT[0]], ids=lambda s: s.case)
def test_committed_cases_regenerate_identically(spec: IncidentSpec, tmp_path: Path) -> None:
    where = {id(s): ROOT / "examples" for s in EXAMPLES}
    where.update({id(s): INCIDENT_SET for s in INCIDENTS})
    where.update({id(s): INCIDENT_SET / "holdout" for s in HOLDOUT})
    committed = where[id(spec)] / spec.case
    generate(spec, tmp_path)
    assert _tree_digest(tmp_path / spec.case) == _tree_digest(committed)
