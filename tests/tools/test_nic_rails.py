"""Where the job's bytes went: NICs left idle on every host are the job's setting, not a link's
fault; an idle storage NIC beside busy rails, or a host whose few GPUs use few NICs, is normal."""

from __future__ import annotations

from forensic.tools.nic_counters import NicReading, _rails_idle


def _host(host: str, busy: set[int], n: int = 8) -> list[NicReading]:
    out = []
    for j in range(n):
        words = 9e11 if j in busy else 3e4
        out.append(
            NicReading(
                host=host,
                nic=f"mlx5_{j}",
                netdev=None,
                seconds=5400.0,
                ib={"port_xmit_data": int(words), "port_rcv_data": int(words)},
                have_before=True,
            )
        )
    return out


HOSTS = [f"h{i}" for i in range(5)]


def test_one_nic_of_eight_busy_on_every_host_is_found() -> None:
    fleet = [r for h in HOSTS for r in _host(h, {0})]
    sig = _rails_idle(fleet, set(HOSTS), {h: 8 for h in HOSTS})
    assert sig is not None and sig.component == "job"
    assert (sig.values["nics_used"], sig.values["nics"], sig.values["hosts"]) == (1, 8, 5)


def test_an_idle_storage_nic_beside_the_rails_is_normal() -> None:
    fleet = [r for h in HOSTS for r in _host(h, set(range(8)), n=9)]
    assert _rails_idle(fleet, set(HOSTS), {h: 8 for h in HOSTS}) is None


def test_a_host_with_two_gpus_of_the_job_uses_two_nics() -> None:
    fleet = [r for h in HOSTS for r in _host(h, {0, 1})]
    assert _rails_idle(fleet, set(HOSTS), {h: 2 for h in HOSTS}) is None
    assert _rails_idle(fleet, set(HOSTS), {h: 8 for h in HOSTS}) is not None


def test_one_host_with_idle_nics_is_not_the_jobs_setting() -> None:
    fleet = [r for h in HOSTS for r in _host(h, {0} if h == "h0" else set(range(8)))]
    assert _rails_idle(fleet, set(HOSTS), {h: 8 for h in HOSTS}) is None


def test_hosts_outside_the_job_and_counters_without_a_window_start_are_not_read() -> None:
    fleet = [r for h in HOSTS for r in _host(h, {0})]
    assert _rails_idle(fleet, {"other-1", "other-2"}, {}) is None
    for r in fleet:
        r.have_before = False
    assert _rails_idle(fleet, set(HOSTS), {h: 8 for h in HOSTS}) is None
