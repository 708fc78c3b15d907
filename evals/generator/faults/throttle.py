"""Clock reductions on one GPU: thermal slowdown (too hot) and power capping or brake (too little power)."""

from __future__ import annotations

import numpy as np

from ..sim import HW_POWER_BRAKE, HW_SLOWDOWN, HW_THERMAL, SW_POWER_CAP, SW_THERMAL, Scenario
from . import _common as c


def _wobble(rng: np.random.Generator, period: float) -> tuple[float, float]:
    return float(rng.uniform(0, 2 * np.pi)), period


def thermal_throttle(scn: Scenario, rng: np.random.Generator, variant: str | None) -> None:
    host, gi = c.pick_gpu(scn, rng)
    gs = scn.gpu(host, gi)
    tf = scn.tf
    ramp = float(rng.uniform(120, 600))
    hw = variant == "hw" or (variant is None and rng.random() < 0.4)
    peak = float(rng.uniform(90.5, 94.5)) if hw else float(rng.uniform(87.5, 90.5))
    base_t = gs.temp.base
    phase, per = _wobble(rng, float(rng.uniform(300, 900)))
    # clocks settle where the slowdown holds the temperature; deeper for HW slowdown
    clk = float(rng.uniform(1100, 1450)) if hw else float(rng.uniform(1500, 1800))
    if scn.opts.get("severity") is not None:
        clk = 1980.0 / (1.0 + (scn.opts["severity"] - 1.0) / 0.75)

    def temp(t: float) -> float:
        x = min(1.0, (t - tf) / ramp)
        return base_t + (peak - base_t) * x + 0.8 * np.sin(phase + (t - tf) / per * 2 * np.pi)

    def sm(t: float) -> float:
        x = min(1.0, (t - tf) / ramp)
        return 1980 - (1980 - clk) * x - 40 * max(0.0, np.sin(phase + (t - tf) / per * 2 * np.pi)) * x

    gs.temp.set(tf, temp)
    gs.mem_temp.set(tf, lambda t: temp(t) + 6)
    gs.sm_clock.set(tf, sm)
    gs.sm_clock.noise = 12.0
    bits = (HW_THERMAL | HW_SLOWDOWN) if hw else SW_THERMAL
    gs.reasons.set(tf + ramp * 0.6, bits)
    gs.power.set(tf, lambda t: gs.power.base * (0.85 + 0.15 * sm(t) / 1980))
    gs.counters["thermal_violation"].set_rate(tf + ramp * 0.6, float(rng.uniform(0.6e9, 0.98e9)))
    gs.tensor.set(tf, gs.tensor.base * clk / 1980)

    def factor(t: float) -> float:
        # step time is partly memory/communication bound: about 3/4 of the clock loss shows up
        return 1.0 + 0.75 * (1980.0 / sm(t) - 1.0)

    c.straggler(scn, [c.rank(scn, host, gi)], tf, factor)
    scn.truth = {"root_cause": "thermal_throttle", "component": f"{host}/gpu{gi}"}
    c.set_symptom(scn, "slow")
    scn.opts["culprit_host"] = host
    scn.notes.append(f"{host}/gpu{gi} thermal to {peak:.1f}C, clocks {clk:.0f} ({'HW' if hw else 'SW'})")


def power_throttle(scn: Scenario, rng: np.random.Generator, variant: str | None) -> None:
    host, gi = c.pick_gpu(scn, rng)
    gs = scn.gpu(host, gi)
    tf = scn.tf
    variant = variant or ("brake" if rng.random() < 0.35 else "cap")
    if variant == "brake":
        clk = float(rng.uniform(990, 1350))
        gs.reasons.set(tf, HW_POWER_BRAKE | HW_SLOWDOWN)
        gs.power.set(tf, float(rng.uniform(300, 420)))
        gs.counters["power_violation"].set_rate(tf, float(rng.uniform(0.85e9, 0.99e9)))
        gs.temp.set(tf, gs.temp.base - float(rng.uniform(4, 9)))
    else:
        limit = float(rng.choice([450.0, 500.0, 550.0, 600.0]))
        clk = {450.0: 1410.0, 500.0: 1530.0, 550.0: 1650.0, 600.0: 1770.0}[limit] + float(
            rng.uniform(-30, 30)
        )
        gs.power_limit.set(tf, limit)
        gs.power.set(tf, limit - 4.0)
        gs.power.noise = 3.0
        gs.power.hi = limit
        gs.reasons.set(tf, SW_POWER_CAP)
        gs.counters["power_violation"].set_rate(tf, float(rng.uniform(0.7e9, 0.97e9)))
        gs.temp.set(tf, gs.temp.base - float(rng.uniform(1, 5)))
    if scn.opts.get("severity") is not None:
        clk = 1980.0 / (1.0 + (scn.opts["severity"] - 1.0) / 0.75)
    gs.sm_clock.set(tf, clk)
    gs.sm_clock.noise = 15.0
    gs.tensor.set(tf, gs.tensor.base * clk / 1980)
    c.straggler(scn, [c.rank(scn, host, gi)], tf, 1.0 + 0.75 * (1980.0 / clk - 1.0))
    scn.truth = {"root_cause": "power_throttle", "component": f"{host}/gpu{gi}"}
    c.set_symptom(scn, "slow")
    scn.opts["culprit_host"] = host
    scn.notes.append(f"{host}/gpu{gi} power {variant}, clocks {clk:.0f}")
