"""From steps.csv text to findings: the path the investigator's job_steps tool takes."""

from __future__ import annotations

import random

import numpy as np
from forensic.tools.detectors import analyze, load_steps_csv
from forensic.tools.detectors.synth import Injected, make_fleet


def _to_csv(fleet, every=10, drop=0.02, seed=0):
    rng = random.Random(seed)
    s_n, r_n = fleet.compute.shape
    lines = []
    for s in range(s_n):
        for r in range(r_n):
            if rng.random() < drop:
                continue
            lines.append(
                f"{r},{fleet.duration[s, r]:.6f},{s * every},{fleet.start[s] + 1e-4 * rng.random():.4f},"
                f"{fleet.compute[s, r]:.6f},{2.5 + 0.01 * rng.random():.4f}"
            )
    rng.shuffle(lines)
    return "rank,duration_s,step,start_unix,compute_s,loss\n" + "\n".join(lines) + "\n"


def test_csv_to_findings():
    fleet = make_fleet(64, 300, seed=3, truth=[Injected(21, "persistent", 0.08, 150)])
    table = load_steps_csv(_to_csv(fleet))
    assert table.n_steps == 300 and table.n_ranks == 64 and table.steps[-1] == 2990
    hosts = {r: f"gpu-a{r // 8:03d}" for r in range(64)}
    a = analyze(table, hosts)
    assert [(s.rank, s.host, s.kind) for s in a.stragglers] == [(21, "gpu-a002", "onset")]
    s = a.stragglers[0]
    assert abs(s.first_step - 1500) <= 30 and abs(s.lateness - 0.08) < 0.01
    assert a.divergence is not None and a.divergence.flagged == []
    assert "rank 21 on gpu-a002" in a.summary
    assert any("not logged" in w for w in a.notes)


def test_csv_with_restart_and_rerun():
    fleet = make_fleet(16, 120, seed=4, truth=[Injected(3, "from_start", 0.06, 0)])
    text = _to_csv(fleet, every=1, drop=0.0)
    # the job crashed after step 99 and resumed from step 90 an hour later: steps 90..99 are
    # logged again (the later rows win), and the rest continue from there
    rerun = []
    for s in range(90, 100):
        for r in range(16):
            rerun.append(
                f"{r},{fleet.duration[s, r]:.6f},{s},{fleet.start[s] + 3600:.4f},"
                f"{fleet.compute[s, r]:.6f},2.5"
            )
    later = text.splitlines()[1:]
    later = [ln for ln in later if int(ln.split(",")[2]) < 100] + [
        ",".join(p if i != 3 else f"{float(p) + 3600:.4f}" for i, p in enumerate(ln.split(",")))
        for ln in later
        if int(ln.split(",")[2]) >= 100
    ]
    table = load_steps_csv("rank,duration_s,step,start_unix,compute_s,loss\n" + "\n".join(later + rerun))
    assert table.rows_rerun == 160
    assert table.steps.tolist() == list(range(120)) and np.all(np.diff(table.start) > 0)
    a = analyze(table)
    assert [s.rank for s in a.stragglers] == [3]
    assert not a.slowdown.regressed  # an hour-long restart gap is not a slower job
