"""A host that a sampled sweep did not read can still get its own call of that tool."""

from __future__ import annotations

from forensic.harness import ledger
from forensic.harness.failure_graph import beliefs, default_graph, observe
from forensic.harness.planners import make_planner
from forensic.harness.planners.base import PlannerView, ToolCall
from forensic.tools import Signal, ToolResult, all_tools

HOSTS = ["h-a", "h-b", "h-c"]


def _view(gpu_sweep_read: list[str]) -> PlannerView:
    sweep = {
        "sampled": True,
        "hosts_total": 3,
        "hosts_read": len(gpu_sweep_read),
        "hosts_not_read": 3 - len(gpu_sweep_read),
    }
    results = [
        (
            "job_steps",
            ToolResult(
                status="ok",
                summary="steps",
                covered=["job"],
                signals=[Signal(name="steps_clean", component="job", kind="job")],
            ),
        ),
        (
            "gpu_health",
            ToolResult(
                status="ok",
                summary="sampled",
                covered=[f"{h}/gpu{i}" for h in gpu_sweep_read for i in range(8)],
                data={"sweep": sweep},
            ),
        ),
        (
            "kernel_log",
            ToolResult(
                status="ok",
                summary="xid",
                covered=["h-b", "h-b/gpu3"],
                signals=[Signal(name="xid_memory", component="h-b/gpu3", kind="gpu", values={"xid": 48})],
            ),
        ),
    ]
    records: list[dict] = []
    for tool, result in results:
        records = ledger.append(records, ledger.make_record(len(records) + 1, tool, {}, result))
    graph = default_graph()
    obs = observe(records)
    tools = all_tools()
    return PlannerView(
        graph=graph,
        observation=obs,
        hypotheses=beliefs(graph, obs),
        executed=[("job_steps", None), ("gpu_health", None), ("kernel_log", None)],
        tools={n: t.cost for n, t in tools.items()},
        host_scoped=[n for n, t in tools.items() if "host" in t.Input.model_fields],
        hosts=HOSTS,
        records=records,
    )


def _decisions(view: PlannerView) -> list:
    planner = make_planner("graph")
    out = []
    for _ in range(6):  # what the planner asks for next, assuming each call found nothing new
        d = planner.decide(view)
        out.append(d)
        if not isinstance(d, ToolCall):
            break
        view.executed.append((d.tool, d.args.get("host")))
    return out


def test_the_suspect_a_sampled_sweep_left_out_gets_its_own_call() -> None:
    asked = [
        (d.tool, d.args.get("host")) for d in _decisions(_view(["h-a", "h-c"])) if isinstance(d, ToolCall)
    ]
    assert ("gpu_health", "h-b") in asked


def test_a_host_the_sweep_read_is_not_asked_again() -> None:
    asked = [
        (d.tool, d.args.get("host")) for d in _decisions(_view(["h-a", "h-b"])) if isinstance(d, ToolCall)
    ]
    assert ("gpu_health", "h-b") not in asked
