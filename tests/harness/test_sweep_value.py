"""A test that only decides the level of a fault (host or GPU) adds nothing to a sweep's value.

The throttle playbooks weigh host-wide DCGM violations strongly (+6 on the host, -8 on its GPUs):
counted in the value of a fleet-wide metrics sweep, those weights would pull the sweep ahead of
the others on every incident, whatever it is about (it read a 2,048-host fleet's metric
files for a NIC fault). ``sweep = false`` keeps them out of that value.
"""

from __future__ import annotations

from forensic.harness import ledger
from forensic.harness.failure_graph import beliefs, default_graph, observe
from forensic.harness.planners import make_planner
from forensic.harness.planners.base import PlannerView, ToolCall
from forensic.tools import Signal, ToolResult, all_tools


def _first_sweeps(graph, n: int = 4) -> list[str]:
    """The fleet-wide calls the planner asks for after a triage that named no suspect."""
    records = ledger.append(
        [],
        ledger.make_record(
            1,
            "job_steps",
            {},
            ToolResult(
                status="ok",
                summary="steps",
                covered=["job"],
                signals=[Signal(name="steps_clean", component="job", kind="job")],
            ),
        ),
    )
    tools = all_tools()
    obs = observe(records)
    view = PlannerView(
        graph=graph,
        observation=obs,
        hypotheses=beliefs(graph, obs),
        executed=[("job_steps", None)],
        tools={k: t.cost for k, t in tools.items()},
        host_scoped=[k for k, t in tools.items() if "host" in t.Input.model_fields],
        hosts=["h-a", "h-b"],
        records=records,
    )
    planner, out = make_planner("graph"), []
    for _ in range(n):
        d = planner.decide(view)
        if not isinstance(d, ToolCall):
            break
        out.append(d.tool)
        view.executed.append((d.tool, d.args.get("host")))
    return out


def _without_level_tests(graph):
    g = graph.model_copy(deep=True)
    for rc in g.root_causes.values():
        rc.tests = [t for t in rc.tests if t.sweep]
    return g


def _level_tests_counted(graph):
    g = graph.model_copy(deep=True)
    for rc in g.root_causes.values():
        for t in rc.tests:
            t.sweep = True
    return g


def test_level_tests_leave_the_sweep_order_as_it_was() -> None:
    graph = default_graph()
    assert any(not t.sweep for rc in graph.root_causes.values() for t in rc.tests)
    assert _first_sweeps(graph) == _first_sweeps(_without_level_tests(graph))


def test_counted_they_would_pull_the_metrics_sweep_forward() -> None:
    graph = default_graph()
    before, counted = _first_sweeps(graph), _first_sweeps(_level_tests_counted(graph))
    assert counted.index("metrics") < before.index("metrics")
