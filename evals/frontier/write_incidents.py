#!/usr/bin/env python3
"""Write the frontier evaluation incidents: DIR/<case>/bundle/... and DIR/<case>/truth.json.

Stdlib only and deterministic: every case has its own seeded RNG, all floats are printed with fixed
formats, files are written in sorted order, gzip members carry mtime=0 and no file name.
Usage: python3 write_incidents.py --out DIR
"""
import argparse
import json
import os
import random
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from engine import Case, Ctr, G, Out, h01, static  # noqa: E402
from writers import write_bundle  # noqa: E402

CASES = []


def case(fn):
    CASES.append(fn)
    return fn


# ------------------------------------------------------------------------------------------ naming
def names_short(n, prefix='gpu-a', start=1):
    return ['%s%03d' % (prefix, i) for i in range(start, start + n)]


def names_fqdn(n, rng):
    pod = rng.choice(['pod-0417', 'pod-1b', 'pod-east-03'])
    out = []
    for i in range(n):
        out.append('hgx-%s-r%02d-u%02d.%s.training-fleet.us-east-2b.compute.internal.research-lab-cluster.net' % (
            rng.choice(['h100', 'sxm5', 'node']), 10 + i // 4, 4 * (i % 4) + 3, pod))
    return out


def names_ip(n, a=90, b=43):
    return ['10-%d-%d-%d' % (a, b + i // 200, 11 + i % 200) for i in range(n)]


def names_dc(n, start=1000, dc='dc3'):
    return ['gpu%04d.%s.internal' % (i, dc) for i in range(start, start + n)]


def names_node(n, start=1):
    return ['node%04d' % i for i in range(start, start + n)]


def sonic_host(k):
    return 'Ethernet%d' % (4 * k)


def sonic_up(u):
    return 'Ethernet%d' % (384 + 8 * u)


def sonic_spine(i):
    return 'Ethernet%d' % (8 * i)


def arista_host(k):
    return 'Ethernet%d/%d' % (k // 4 + 1, k % 4 + 1)


def arista_up(u):
    return 'Ethernet%d/1' % (57 + u)


def cumulus_host(k):
    return 'swp%ds%d' % (k // 4 + 1, k % 4)


def cumulus_up(u):
    return 'swp%d' % (57 + u)


def quantum_port(k):
    return '1/%d/%d' % (k // 2 + 1, k % 2 + 1)


def quantum_up(u):
    return '1/%d/1' % (49 + u)


# ------------------------------------------------------------------------------------------ helpers
def fleet(c, names, racks_of=4, job_n=None, spare=0, ibdevs=None, netdevs=None):
    job_n = len(names) - spare if job_n is None else job_n
    for i, nm in enumerate(names):
        c.add_host(nm, 'r%02d' % (1 + i // racks_of), job=i < job_n, ibdevs=ibdevs, netdevs=netdevs)


def noise(c, n_static=4):
    """Realistic decoys present in every case: old static counts, warm GPUs, old dmesg lines."""
    rng = c.rng
    hs = c.hosts
    for k in range(n_static):
        h = hs[rng.randrange(len(hs))]
        n = h.nics[rng.randrange(len(h.nics))]
        n.ctr['symbol_error'] = static(rng.randrange(3, 400))
        n.ctr['link_downed'] = static(rng.randrange(1, 3))
        n.ctr['port_rcv_errors'] = static(rng.randrange(1, 60))
        g = hs[rng.randrange(len(hs))].gpus[rng.randrange(c.gpn)]
        g.sbe_agg_extra = rng.randrange(2, 900)
        g2 = hs[rng.randrange(len(hs))].gpus[rng.randrange(c.gpn)]
        for li in range(3):
            g2.nvl['crc'][li] = static(rng.randrange(1, 5000))
            g2.nvl['replay'][li] = static(rng.randrange(0, 40))
        g3 = hs[rng.randrange(len(hs))].gpus[rng.randrange(c.gpn)]
        if g3.busy:
            g3.temp = G(rng.randrange(79, 84), jit=0.01)
        g4 = hs[rng.randrange(len(hs))].gpus[rng.randrange(c.gpn)]
        g4.aer = {'Receiver Error': rng.randrange(1, 4), 'Bad DLLP': rng.randrange(0, 2)}
    h = hs[rng.randrange(len(hs))]
    h.dmesg.append((max(h.boot + 7200, c.start - rng.randrange(3, 9) * 86400), 'NVRM: Xid (PCI:0000:%02x:00): 13, pid=%d, name=python3, Graphics SM Warp Exception on (GPC 4, TPC 2, SM 1): Out Of Range Address' % (
        h.gpus[1].bus, rng.randrange(1000, 90000))))
    h2 = hs[rng.randrange(len(hs))]
    h2.dmesg.append((c.start + 300, 'workqueue: ib_cache_event_task [ib_core] hogged CPU for >10000us 4 times, consider switching to WQ_UNBOUND'))


def power_cap_decoy(c, h, gi, onset=None):
    """A GPU at its normal SW power cap: draws its limit at a lower clock; a few percent slower at most."""
    g = h.gpus[gi]
    c.decoy_hosts.append(h)
    m = g.m
    g.sm = G(m['sm'] - 240, jit=0.008)
    g.power = G(m['plim'] - 1.5, jit=0.002)
    g.reasons = G(0x4)
    g.temp = G(74, jit=0.02)
    g.power_viol = Ctr(5 * 10 ** 11, 9e8)
    g.slow = G(1.0, 1.012, onset) if onset else G(1.012)
    return g


def collect(c, hosts):
    """Node data only for these hosts (the collector ran on some racks only)."""
    keep = set(id(h) for h in hosts)
    for h in c.hosts:
        if id(h) not in keep:
            h.detail = 'none'


def racks(c, *rs):
    return [h for h in c.hosts if h.rack in rs]


def cap_collect(c, k=4):
    """At most k hosts with full node data: the hosts named by the truth and the decoy hosts first."""
    full = [h for h in c.hosts if h.detail == 'full']
    if len(full) <= k:
        return
    comp = (c.component or '').split('/')[0]
    pri = [h for h in full if h.name == comp] + [h for h in c.decoy_hosts if h in full] + full
    keep = []
    for h in pri:
        if h not in keep:
            keep.append(h)
    keep = keep[:k]
    for h in full:
        if h not in keep:
            h.detail = 'none'


def straggle(g, factor, onset):
    g.slow = G(1.0, factor, onset)


def bump_comm(c, factor, onset):
    c.base_comm = G(c.base_comm.normal, c.base_comm.normal * factor, onset, jit=0.04)


def traffic_scale(c, factor, onset, hosts=None):
    for h in (hosts or c.job_hosts):
        for n in h.nics:
            for k in ('port_xmit_data', 'port_rcv_data'):
                x = n.ctr[k]
                n.ctr[k] = Ctr(x.b, x.r1, x.r1 * factor, onset)


def gpu_util_scale(c, factor, onset):
    for h in c.job_hosts:
        for g in h.gpus:
            g.util = G(g.util.normal, int(g.util.normal * factor), onset)
            g.tensor = G(g.tensor.normal, round(g.tensor.normal * factor, 3), onset, jit=0.02)
            g.power = G(g.power.normal, g.power.normal * (0.55 + 0.45 * factor), onset, jit=0.01)
            if g.reasons.normal == 0x4:
                g.reasons = G(0x4, 0x0, onset)


def alert(c, name, labels, t, summary, severity='warning'):
    from engine import iso
    lab = {'alertname': name, 'severity': severity}
    lab.update(labels)
    c.alerts.append({'status': 'firing', 'labels': lab, 'annotations': {'summary': summary},
                     'startsAt': iso(t), 'endsAt': '0001-01-01T00:00:00Z',
                     'generatorURL': 'http://prometheus.monitoring.svc:9090/graph?g0.expr=%s' % name,
                     'fingerprint': '%016x' % int(h01(c.id, name) * (1 << 63))})


def window(c, t):
    return c.start + int(t * (c.end - c.start))


# ============================================================================================ cases
@case
def fx01(rng):
    """pcie_downtrain on a GPU; a prominently power-capped GPU elsewhere is the decoy."""
    c = Case('fx-01', rng, 'pcie_downtrain', '2026-03-09T01:40:00Z', 90, 'H100', 8, 8, 'InfiniBand')
    fleet(c, names_short(12, 'gpu-b'))
    c.build_fabric(2, 2, lambda i: 'ib-leaf-%02d' % (i + 1), lambda i: 'ib-spine-%02d' % (i + 1),
                   quantum_port, quantum_up, quantum_port)
    c.sources -= {'snmp', 'switch_cmd'}
    collect(c, racks(c, 'r02', 'r03')[:6])
    noise(c)
    on = window(c, 0.3)
    h = c.hosts[7]
    g = h.gpus[3]
    g.width = 4
    g.pcie_replay = Ctr(40, 0.0, 2.5, on)
    straggle(g, 1.34, on)
    h.dmesg.append((on + 3, 'pcieport 0000:17:01.0: AER: Corrected error message received from 0000:%02x:00.0' % g.bus))
    h.dmesg.append((on + 3.1, 'nvidia 0000:%02x:00.0: PCIe Bus Error: severity=Corrected, type=Data Link Layer, (Transmitter ID)' % g.bus))
    g.aer = {'Bad DLLP': 37, 'Replay Timer Timeout': 12}
    power_cap_decoy(c, c.hosts[2], 5)
    c.title = 'Step time up ~35% since 02:07 on llm-34b'
    c.reported = 'throughput dropped mid-run; no alerts; one node shows SW power cap in nvidia-smi'
    c.component = '%s/gpu3' % h.name
    c.job_name = 'llm-34b-sft'
    return c


@case
def fx02(rng):
    """pcie_downtrain on a NIC (RoCE), no compute column; a power-capped GPU is the loudest local anomaly."""
    ib = ['mlx5_%d' % i for i in range(2, 10)]
    nd = ['ens%df0np0' % (i + 1) for i in range(8)]
    c = Case('fx-02', rng, 'pcie_downtrain', '2026-05-21T11:00:00Z', 60, 'A100', 8, 8, 'Ethernet', 200)
    c.driver = '535.154.05'
    fleet(c, names_ip(8), ibdevs=ib, netdevs=nd)
    c.build_fabric(1, 2, lambda i: 'sw-leaf-a1', lambda i: 'sw-spine-%d' % (i + 1), arista_host, arista_up, arista_host)
    c.sources -= {'compute', 'snmp'}
    c.nic_pci = True
    noise(c)
    h = c.hosts[5]
    n = c.nic(h, 'mlx5_6')
    n.gen, n.width = 3, 8
    n.eth['outbound_pci_stalled_wr_events'] = Ctr(120, 0.0, 55.0, c.start)
    bump_comm(c, 2.1, c.start - 3600)
    traffic_scale(c, 1 / 2.1, c.start - 3600)
    for hh in c.hosts:
        for nn in hh.nics:
            if nn is not n:
                nn.eth['outbound_pci_stalled_wr_events'] = static(rng.randrange(0, 5))
    power_cap_decoy(c, c.hosts[1], 2)
    power_cap_decoy(c, c.hosts[3], 6)
    c.title = 'Job restarted after maintenance runs at half the usual speed'
    c.reported = 'All ranks equally slow. nvidia-smi on 10-90-43-12 shows SW Power Cap active.'
    c.component = '%s/mlx5_6' % h.name
    return c


def roce_pfc_fleet(c, names, leaves, spines, nph=8):
    fleet(c, names)
    c.build_fabric(leaves, spines, lambda i: 'leaf%02d' % (i + 1), lambda i: 'spine%02d' % (i + 1),
                   sonic_host, sonic_up, sonic_spine)
    c.default_traffic()


def pfc_victims(c, hosts, onset, rate, via_ports):
    """Switch ports facing job NICs transmit pauses to them (NICs are victims: rx only)."""
    for h in hosts:
        for n in h.nics:
            p = c.switches[n.switch].port(n.switch_port)
            p.pfc_tx = Ctr(rng_static(c, n), 0.0, rate * (0.6 + 0.8 * h01(c.id, n.host.name, n.ibdev)), onset)
            n.eth['rx_discards_phy'] = static(0)


def rng_static(c, n):
    return int(h01(c.id, 'old', n.host.name, n.ibdev) * 300)


@case
def fx03(rng):
    """pfc_pause_storm from a host NIC (tx pauses, rx_out_of_buffer); every other NIC only receives pauses."""
    c = Case('fx-03', rng, 'pfc_pause_storm', '2026-06-02T19:15:00Z', 75, 'H100', 8, 8, 'Ethernet', 400)
    roce_pfc_fleet(c, names_dc(16, 2210), 2, 2)
    c.sources -= {'snmp'}
    collect(c, racks(c, 'r03') + racks(c, 'r01')[:2])
    noise(c)
    on = window(c, 0.25)
    h = c.hosts[11]
    n = c.nic(h, 'mlx5_4')
    n.pfc_tx = Ctr(0, 0.0, 5200.0, on)
    n.eth['rx_out_of_buffer'] = Ctr(0, 0.0, 800.0, on)
    n.eth['rx_discards_phy'] = Ctr(0, 0.0, 35.0, on)
    n.eth['tx_pause_storm_warning_events'] = Ctr(0, 0.0, 0.004, on)
    n.eth['outbound_pci_stalled_wr_events'] = Ctr(0, 0.0, 140.0, on)
    leaf = c.switches[n.switch]
    # the leaf propagates: uplinks tx pauses to spines, spines tx to the other leaf, that leaf to its hosts
    victims = [hh for hh in c.job_hosts if hh.nics[0].switch != leaf.name]
    for p in leaf.ports.values():
        if p.peer and p.peer[0] == 'port':
            p.pfc_tx = Ctr(0, 0.0, 2000.0, on)
            p.peer[1].sw.port(p.peer[1].name)
    for sp in c.spines:
        for p in sp.ports.values():
            if p.peer[1].sw is not leaf:
                p.pfc_tx = Ctr(0, 0.0, 1500.0, on)
    pfc_victims(c, victims, on, 900.0, None)
    for hh in c.job_hosts:
        if hh is h:
            continue
        if hh.nics[0].switch == leaf.name:
            for nn in hh.nics:
                c.switches[nn.switch].port(nn.switch_port).pfc_tx = Ctr(0, 0.0, 1200.0, on)
    leaf.port(n.switch_port).wd_detect = 3
    bump_comm(c, 3.0, on)
    traffic_scale(c, 1 / 3.0, on)
    c.default_traffic()
    power_cap_decoy(c, c.hosts[4], 1)
    c.title = 'Collective bandwidth collapsed; NCCL allreduce 3x slower on mixtral-ft'
    c.reported = 'RoCE fabric; many hosts show rx pause counters climbing'
    c.component = '%s/mlx5_4' % h.name
    return c


@case
def fx04(rng):
    """pfc_pause_storm originating at a leaf uplink toward a spine; job NICs are victims on other leaves."""
    c = Case('fx-04', rng, 'pfc_pause_storm', '2026-07-14T04:20:00Z', 80, 'H200', 8, 8, 'Ethernet', 400)
    fleet(c, names_fqdn(12, rng) + names_node(12, 300))
    c.build_fabric(3, 2, lambda i: 'lf-%s' % 'abc'[i], lambda i: 'sp-%d' % (i + 1), sonic_host, sonic_up, sonic_spine)
    c.default_traffic()
    c.sw_cmd_before = True
    c.sources -= {'snmp'}
    collect(c, racks(c, 'r01', 'r04')[:6])
    noise(c)
    on = window(c, 0.2)
    origin_leaf = c.switches['lf-b']
    up = origin_leaf.port(sonic_up(1))  # toward sp-2
    up.pfc_tx = Ctr(0, 0.0, 6000.0, on)
    sp2 = up.peer[1].sw
    up.peer[1].wd_detect = 4
    up.peer[1].wd_stormed = True
    up.peer[1].wd_drop = 1834221
    for p in sp2.ports.values():
        if p.peer[1].sw is not origin_leaf:
            p.pfc_tx = Ctr(0, 0.0, 3000.0, on)
    for leaf in (c.switches['lf-a'], c.switches['lf-c']):
        for p in leaf.ports.values():
            if p.peer and p.peer[0] == 'nic':
                p.pfc_tx = Ctr(0, 0.0, 700.0 * (0.6 + 0.8 * h01(c.id, p.name)), on)
    # job hosts under lf-b: some rx pauses as well? no: lf-b host ports do not pause
    bump_comm(c, 2.4, on)
    traffic_scale(c, 1 / 2.4, on)
    c.default_traffic()
    power_cap_decoy(c, c.hosts[9], 0)
    c.title = 'Allreduce busbw down 60% on 24-node run since 04:36'
    c.reported = 'Every job NIC on lf-a and lf-c sees rx_prio3_pause climbing; hosts look fine.'
    c.component = 'lf-b/%s' % sonic_up(1)
    return c


@case
def fx05(rng):
    """pfc_pause_storm entering at a host-facing leaf port whose host is outside the job; switch-side data only."""
    c = Case('fx-05', rng, 'pfc_pause_storm', '2026-08-03T22:05:00Z', 60, 'A100', 8, 8, 'Ethernet', 200)
    c.driver = '535.129.03'
    names = names_node(16, 41) + ['node0057', 'node0058']
    fleet(c, names, job_n=16)
    for h in c.hosts[16:]:
        h.detail = 'none'
    c.build_fabric(2, 2, lambda i: 'leaf-r%d' % (i + 3), lambda i: 'spine-%d' % (i + 1), cumulus_host, cumulus_up, cumulus_host)
    c.default_traffic()
    c.sources -= {'nodes', 'dcgm', 'node_exporter', 'compute'}
    c.sw_cmd_before = True
    noise(c)
    on = window(c, 0.3)
    outsider = c.hosts[17]
    n = outsider.nics[5]
    n.pfc_tx = Ctr(0, 0.0, 7000.0, on)  # recorded only by the switch port it enters
    lp = c.switches[n.switch].port(n.switch_port)
    lp.wd_detect = 6
    lp.wd_stormed = True
    lp.wd_drop = 922110
    leaf = c.switches[n.switch]
    for p in leaf.ports.values():
        if p.peer and p.peer[0] == 'port':
            p.pfc_tx = Ctr(0, 0.0, 2500.0, on)
        elif p.peer and p.peer[0] == 'nic' and p.peer[1].host in c.job_hosts:
            p.pfc_tx = Ctr(0, 0.0, 900.0 * (0.6 + 0.8 * h01(c.id, p.name)), on)
    for sp in c.spines:
        for p in sp.ports.values():
            if p.peer[1].sw is not leaf:
                p.pfc_tx = Ctr(0, 0.0, 1800.0, on)
    other = [l for l in c.leaves if l is not leaf][0]
    for p in other.ports.values():
        if p.peer and p.peer[0] == 'nic':
            p.pfc_tx = Ctr(0, 0.0, 600.0 * (0.6 + 0.8 * h01(c.id, p.name)), on)
    bump_comm(c, 2.6, on)
    traffic_scale(c, 1 / 2.6, on)
    c.default_traffic()
    c.title = 'Training step time 2.5x; hosts healthy per node checks'
    c.reported = 'Only switch CLI dumps were collected (node agents were being upgraded).'
    c.component = '%s/%s' % (leaf.name, n.switch_port)
    return c


@case
def fx06(rng):
    """pfc_pause_storm from a spine port toward a leaf; node data only for some hosts, switch counters before/after."""
    c = Case('fx-06', rng, 'pfc_pause_storm', '2026-09-18T07:30:00Z', 90, 'H100', 8, 8, 'Ethernet', 400)
    fleet(c, names_ip(32, 12, 7), racks_of=8)
    c.build_fabric(4, 2, lambda i: 'T1-LEAF-%02d' % (i + 1), lambda i: 'T2-SPINE-%02d' % (i + 1), sonic_host, sonic_up, sonic_spine)
    c.default_traffic()
    c.sw_cmd_before = True
    c.sources -= {'snmp', 'dcgm'}
    for i, h in enumerate(c.hosts):
        if i % 4 != 0:
            h.detail = 'none'
    noise(c)
    on = window(c, 0.35)
    sp = c.switches['T2-SPINE-01']
    port = sp.port(sonic_spine(2))  # toward T1-LEAF-03
    port.pfc_tx = Ctr(0, 0.0, 8000.0, on)
    port.peer[1].wd_detect = 2
    port.peer[1].wd_stormed = True
    port.peer[1].wd_drop = 55120
    leaf3 = port.peer[1].sw
    for p in leaf3.ports.values():
        if p.peer and p.peer[0] == 'nic':
            p.pfc_tx = Ctr(rng_static(c, p.peer[1]), 0.0, 1100.0 * (0.6 + 0.8 * h01(c.id, p.name)), on)
        elif p.peer and p.peer[0] == 'port' and p is not port.peer[1]:
            pass
    # victims on leaf3 send nothing back; other leaves see a little backpressure from nothing: quiet
    bump_comm(c, 1.9, on)
    traffic_scale(c, 1 / 1.9, on)
    c.default_traffic()
    power_cap_decoy(c, c.hosts[3], 4)
    c.title = 'p50 step time +90% on 256-GPU job, started 08:01'
    c.reported = 'NICs under T1-LEAF-03 report pauses received; host NICs transmit none.'
    c.component = 'T2-SPINE-01/%s' % sonic_spine(2)
    return c


@case
def fx07(rng):
    """ecmp_hash_polarization: one leaf's uplinks imbalanced (SNMP), a power-capped GPU as decoy."""
    c = Case('fx-07', rng, 'ecmp_hash_polarization', '2026-04-11T13:00:00Z', 60, 'H100', 8, 8, 'Ethernet', 400)
    fleet(c, names_short(16, 'h100-c'))
    c.uplinks['leaf-02'] = [0.82, 0.06, 0.06, 0.06]
    c.build_fabric(2, 2, lambda i: 'leaf-%02d' % (i + 1), lambda i: 'spine-%02d' % (i + 1), arista_host, arista_up,
                   arista_host, uplinks_per_spine=2)
    c.default_traffic()
    leaf = c.switches['leaf-02']
    hot = sorted([p for p in leaf.ports.values() if p.peer and p.peer[0] == 'port'], key=lambda p: p.name)[0]
    hot.out_disc = Ctr(1200, 0.0, 4100.0, c.start - 600)
    c.sources -= {'switch_cmd'}
    collect(c, racks(c, 'r02', 'r03')[:5])
    noise(c)
    bump_comm(c, 1.8, c.start - 600)
    traffic_scale(c, 1 / 1.8, c.start - 600)
    c.default_traffic()
    for p in leaf.ports.values():
        if p is hot:
            p.out_disc = Ctr(1200, 0.0, 4100.0, c.start - 600)
    d = power_cap_decoy(c, c.hosts[5], 7)
    alert(c, 'GPUPowerViolation', {'Hostname': c.hosts[5].name, 'gpu': '7', 'UUID': d.uuid}, c.start + 120,
          'GPU power violation time increasing')
    c.title = '128-GPU job 40% slower than before the weekend'
    c.reported = 'Several changes over the weekend (switch OS upgrade, GPU driver update). One GPU shows SW power cap.'
    c.component = 'leaf-02'
    return c


@case
def fx08(rng):
    """ecmp_hash_polarization seen only in SONiC interface counters (before/after); no SNMP, no steps timing column."""
    c = Case('fx-08', rng, 'ecmp_hash_polarization', '2026-10-06T03:10:00Z', 45, 'H200', 8, 4, 'Ethernet', 400)
    nd = ['eth%d' % i for i in (1, 3, 5, 7)]
    ib = ['rocep%ds0' % b for b in (26, 60, 156, 188)]
    fleet(c, names_dc(24, 3300, 'iad1'), ibdevs=ib, netdevs=nd)
    c.uplinks['sw-l3'] = [0.03, 0.91, 0.03, 0.03]
    c.build_fabric(3, 4, lambda i: 'sw-l%d' % (i + 1), lambda i: 'sw-s%d' % (i + 1), sonic_host, sonic_up, sonic_spine)
    c.default_traffic()
    c.sw_cmd_before = True
    c.sources -= {'snmp', 'compute', 'dcgm'}
    collect(c, racks(c, 'r01', 'r05'))
    leaf = c.switches['sw-l3']
    ups = sorted([p for p in leaf.ports.values() if p.peer and p.peer[0] == 'port'], key=lambda p: p.name)
    noise(c)
    bump_comm(c, 1.6, c.start - 1200)
    traffic_scale(c, 1 / 1.6, c.start - 1200)
    c.default_traffic()
    ups[1].out_disc = Ctr(52, 0.0, 2600.0, c.start - 1200)
    c.title = 'Step time regressed 35% after rack move of 8 nodes'
    c.reported = 'Moved 8 nodes to a new rack yesterday; BIOS settings were also refreshed.'
    c.component = 'sw-l3'
    return c


@case
def fx09(rng):
    """link_degradation on an IB NIC: running 200G instead of 400G, symbol errors and flaps inside the window."""
    c = Case('fx-09', rng, 'link_degradation', '2026-02-17T16:40:00Z', 70, 'H100', 8, 8, 'InfiniBand')
    fleet(c, names_fqdn(8, rng))
    c.build_fabric(1, 2, lambda i: 'qm9700-l1', lambda i: 'qm9700-s%d' % (i + 1), quantum_port, quantum_up, quantum_port)
    c.sources -= {'snmp', 'switch_cmd'}
    c.dmesg_style = 'T'
    for h in c.hosts:
        h.dmesg_style = 'T'
    noise(c, 6)
    on = window(c, 0.3)
    h = c.hosts[2]
    n = c.nic(h, 'mlx5_5')
    n.rate_now = 200
    n.ctr['symbol_error'] = Ctr(14, 0.0, 3.2, on)
    n.ctr['link_downed'] = Ctr(0, 0.0, 0.0, on, steps=[(on + 40, 1), (on + 610, 1), (on + 1900, 1)])
    n.ctr['port_rcv_errors'] = Ctr(3, 0.0, 0.9, on)
    n.carrier = Ctr(2, 0, 0, None, steps=[(on + 40, 2), (on + 610, 2), (on + 1900, 2)])
    for dt in (40, 610, 1900):
        h.dmesg.append((on + dt, 'mlx5_core %s %s: Port: 1 Link DOWN' % (n.pci_sys(), n.ibdev)))
        h.dmesg.append((on + dt + 6, 'mlx5_core %s %s: Port: 1 Link ACTIVE' % (n.pci_sys(), n.ibdev)))
    bump_comm(c, 2.2, on)
    traffic_scale(c, 1 / 2.2, on)
    power_cap_decoy(c, c.hosts[6], 3)
    c.title = 'NCCL allreduce time doubled on llama-70b continued pretraining'
    c.reported = ''
    c.component = '%s/mlx5_5' % h.name
    return c


@case
def fx10(rng):
    """link_degradation at scale: FEC corrected/uncorrectable blocks growing on one RoCE NIC among 256 hosts; decoy static FEC counts; no compute column, no XID."""
    c = Case('fx-10', rng, 'link_degradation', '2026-11-02T09:00:00Z', 60, 'H100', 8, 8, 'Ethernet', 400)
    fleet(c, names_node(256, 1001), racks_of=8)
    c.sources -= {'compute', 'snmp', 'switch_cmd', 'dcgm', 'node_exporter', 'topology_switches'}
    c.build_fabric(32, 4, lambda i: 'eth-leaf%02d' % (i + 1), lambda i: 'eth-spine%02d' % (i + 1), sonic_host,
                   sonic_up, sonic_spine)
    for i, h in enumerate(c.hosts):
        h.detail = 'lite' if (i // 8) % 5 != 2 else 'none'
    c.gz.add('nodes_cmd')
    for k in range(60):
        hh = c.hosts[rng.randrange(256)]
        nn = hh.nics[rng.randrange(8)]
        nn.fec_lanes = [static(rng.randrange(10 ** 5, 5 * 10 ** 9)) for _ in range(4)]
        if k % 5 == 0:
            nn.fec_unc = static(rng.randrange(1, 40))
    on = window(c, 0.2)
    h = c.hosts[173]
    n = h.nics[6]
    n.fec_lanes = [Ctr(rng.randrange(10 ** 4, 10 ** 5), 0.05, r, on) for r in (9000.0, 14000.0, 8.0e5, 11000.0)]
    n.fec_unc = Ctr(0, 0.0, 6.5, on)
    bump_comm(c, 1.45, on)
    c.title = 'MFU down from 48% to 39% on 2048-GPU run since 09:12'
    c.reported = 'No XIDs, no alerts. Node snapshots taken from all hosts (NVLink and FEC only).'
    c.component = '%s/%s' % (h.name, n.ibdev)
    return c


@case
def fx11(rng):
    """link_degradation from the switch side of the cable: errors counted at the switch port, host without node data."""
    c = Case('fx-11', rng, 'link_degradation', '2026-01-23T21:00:00Z', 60, 'A100', 8, 8, 'Ethernet', 200)
    c.driver = '525.85.12'
    c.smi_reason_title = 'Clocks Throttle Reasons'
    c.dcgm_reason_family = 'DCGM_FI_DEV_CLOCK_THROTTLE_REASONS'
    c.dcgm_hostname_label = 'Hostname'
    fleet(c, names_ip(16, 31, 200))
    c.build_fabric(2, 2, lambda i: 'rack%d-tor' % (i + 1), lambda i: 'agg%d' % (i + 1), cumulus_host, cumulus_up, cumulus_host)
    c.default_traffic()
    c.sources -= {'compute'}
    c.sw_cmd_before = True
    on = window(c, 0.25)
    h = c.hosts[13]
    n = h.nics[2]
    sw = c.switches[n.switch]
    p = sw.port(n.switch_port)
    p.in_err = Ctr(2, 0.0, 45.0, on)
    p.oper = 'U'
    collect(c, [x for x in c.hosts if x.rack in ('r01', 'r02')][:6])
    noise(c)
    bump_comm(c, 1.7, on)
    traffic_scale(c, 1 / 1.7, on)
    c.default_traffic()
    p.in_err = Ctr(2, 0.0, 45.0, on)
    for x in sw.ports.values():
        if x is not p and x.peer and x.peer[0] == 'nic' and h01(c.id, x.name) < 0.1:
            x.in_err = static(rng.randrange(1, 30))
    c.title = 'Job slowed 40% around 21:15; racks r01-r02 checked and clean'
    c.reported = 'Node collector only ran on r01-r02.'
    c.component = '%s/%s' % (sw.name, p.name)
    return c


@case
def fx12(rng):
    """thermal_throttle on one GPU (HW thermal slowdown), straggler in compute_s; warm GPUs and SW-capped GPUs as decoys."""
    c = Case('fx-12', rng, 'thermal_throttle', '2026-07-29T14:10:00Z', 80, 'H200', 8, 8, 'InfiniBand')
    fleet(c, names_short(8, 'h200-'))
    c.sources -= {'snmp', 'switch_cmd'}
    c.dmesg_style = 'journal'
    for h in c.hosts:
        h.dmesg_style = 'journal'
    noise(c, 6)
    on = window(c, 0.4)
    h = c.hosts[4]
    g = h.gpus[6]
    g.temp = G(74, 91, on, jit=0.01)
    g.sm = G(1890, 1275, on, jit=0.02)
    g.reasons = G(0x0, 0x48, on)
    g.power = G(655, 470, on, jit=0.02)
    g.thermal_viol = Ctr(2 * 10 ** 9, 0.0, 6.1e8, on)
    straggle(g, 1.42, on)
    for hh in c.hosts[:3]:
        hh.gpus[2].temp = G(82, jit=0.01)
    power_cap_decoy(c, c.hosts[1], 4)
    c.title = 'Step time +40% since 15:12 (h200 pool, 64 GPUs)'
    c.reported = 'Facilities did maintenance in the hall this afternoon.'
    c.component = '%s/gpu6' % h.name
    return c


@case
def fx13(rng):
    """thermal_throttle of a whole host from its cooling (fan failure in SEL/SDR); no compute column."""
    c = Case('fx-13', rng, 'thermal_throttle', '2026-06-20T02:00:00Z', 60, 'A100', 8, 4, 'InfiniBand', 200)
    c.driver = '535.104.05'
    ib = ['mlx5_0', 'mlx5_1', 'mlx5_4', 'mlx5_5']
    fleet(c, names_node(12, 140), ibdevs=ib)
    c.sources -= {'compute', 'snmp', 'switch_cmd'}
    c.dmesg_style = 'kmsg'
    for h in c.hosts:
        h.dmesg_style = 'kmsg'
    noise(c, 5)
    on = window(c, 0.3)
    h = c.hosts[9]
    for g in h.gpus:
        g.temp = G(66, 88 + g.index % 3, on, jit=0.01)
        g.sm = G(1410, 1005 + 15 * g.index, on, jit=0.02)
        g.reasons = G(g.reasons.normal, 0x60 if g.index % 2 else 0x20, on)
        g.thermal_viol = Ctr(0, 0.0, 5.5e8, on)
        g.power = G(g.power.normal, 290, on, jit=0.02)
        straggle(g, 1.3, on)
    h.sel = [(h.boot + 60, 'Power Unit #0x01', 'Power off/down', 'Asserted'),
             (on - 40, 'Fan #0x33', 'Lower Critical going low', 'Asserted'),
             (on - 38, 'Fan #0x34', 'Lower Critical going low', 'Asserted'),
             (on + 200, 'Temperature #0x0c', 'Upper Non-critical going high', 'Asserted')]
    h.fans = [('FAN1', '13440 RPM', 'ok'), ('FAN2', '13560 RPM', 'ok'), ('FAN3', '0 RPM', 'cr'), ('FAN4', '0 RPM', 'cr'),
              ('FAN5', '13320 RPM', 'ok'), ('FAN6', '13500 RPM', 'ok')]
    for hh in c.hosts:
        if hh is not h:
            hh.fans = [('FAN%d' % (i + 1), '%d RPM' % (9000 + rng.randrange(900)), 'ok') for i in range(6)]
            hh.sel = [(hh.boot + 60, 'Power Unit #0x01', 'Power off/down', 'Asserted')]
    c.hosts[3].sel.append((c.start - 12 * 86400, 'Fan #0x31', 'Lower Critical going low', 'Asserted'))
    c.hosts[3].sel.append((c.start - 12 * 86400 + 500, 'Fan #0x31', 'Lower Critical going low', 'Deasserted'))
    c.title = 'Throughput -25% overnight on 96-GPU A100 job'
    c.reported = 'paged at 02:30'
    c.component = h.name
    return c


@case
def fx14(rng):
    """thermal_throttle visible only in DCGM series (intermittent HW thermal bit, thermal violation ns growing);
    the NVML snapshot was taken after the GPU cooled; prominent power-capped GPUs in the snapshot are decoys."""
    c = Case('fx-14', rng, 'thermal_throttle', '2026-08-30T10:30:00Z', 90, 'H100', 8, 8, 'InfiniBand')
    fleet(c, names_dc(16, 5120, 'phx2'))
    c.sources -= {'compute', 'snmp', 'switch_cmd'}
    c.gz.add('dcgm')
    collect(c, racks(c, 'r04', 'r02')[:6])
    noise(c)
    on = window(c, 0.15)
    off = c.end - 240
    h = c.hosts[12]
    g = h.gpus[0]
    g.temp = G(70, 90, on, jit=0.02, until=off)
    g.sm = G(1905, 1180, on, jit=0.03, until=off)
    g.reasons = G(0x0, 0x40, on, until=off)
    g.thermal_viol = Ctr(0, 0.0, 4.2e8, on)
    g.slow = G(1.0, 1.38, on, until=off)
    for hh, gi in ((c.hosts[2], 3), (c.hosts[6], 5), (c.hosts[12], 4)):
        power_cap_decoy(c, hh, gi)
    c.title = 'Step time +35%, intermittent, no XIDs'
    c.reported = 'Node snapshots taken at 12:00 look normal except SW power cap on a few GPUs.'
    c.component = '%s/gpu0' % h.name
    return c


@case
def fx15(rng):
    """power_throttle of one GPU: its enforced power limit was lowered (SW power cap bit, like the normal decoys)."""
    c = Case('fx-15', rng, 'power_throttle', '2026-03-30T06:00:00Z', 60, 'H100', 8, 8, 'InfiniBand')
    fleet(c, names_short(8, 'gpu-e1'))
    c.sources -= {'snmp', 'switch_cmd'}
    noise(c)
    on = window(c, 0.35)
    h = c.hosts[3]
    g = h.gpus[5]
    g.plim = 350
    g.power = G(349, jit=0.003)
    g.sm = G(1155, jit=0.02)
    g.reasons = G(0x4)
    g.power_viol = Ctr(10 ** 12, 9.8e8)
    g.slow = G(1.45)
    h.dmesg.append((on, 'audit: type=1105 audit(%d.211:9127): pid=88211 uid=0 auid=4294967295 ses=4294967295 subj=unconfined msg=\'op=PAM:session_open grantors=pam_permit acct="root" exe="/usr/bin/sudo"\'' % on))
    for hh, gi in ((c.hosts[0], 2), (c.hosts[5], 1), (c.hosts[6], 7)):
        power_cap_decoy(c, hh, gi)
    c.title = 'Slow ranks on gpu-e1 pool; all 64 ranks wait on one'
    c.reported = 'Pool was lent to another team last week.'
    c.component = '%s/gpu5' % h.name
    return c


@case
def fx16(rng):
    """power_throttle host-wide: power brake asserted on every GPU of one host (PSU failure in SEL)."""
    c = Case('fx-16', rng, 'power_throttle', '2026-12-01T18:20:00Z', 70, 'H100', 8, 8, 'Ethernet', 400)
    fleet(c, names_fqdn(8, rng))
    c.build_fabric(1, 2, lambda i: 'tor-b7', lambda i: 'spn-%d' % (i + 1), sonic_host, sonic_up, sonic_spine)
    c.default_traffic()
    c.sources -= {'snmp'}
    noise(c)
    on = window(c, 0.4)
    h = c.hosts[5]
    for g in h.gpus:
        g.reasons = G(g.reasons.normal, 0x88, on)
        g.sm = G(g.sm.normal, 930 + 10 * g.index, on, jit=0.02)
        g.power = G(g.power.normal, 340, on, jit=0.03)
        straggle(g, 1.55, on)
    h.sel = [(h.boot + 60, 'Power Unit #0x01', 'Power off/down', 'Asserted'),
             (on - 5, 'Power Supply #0x52', 'Failure detected', 'Asserted'),
             (on - 4, 'Power Supply #0x50', 'Redundancy Lost', 'Asserted')]
    for hh in c.hosts:
        if hh is not h:
            hh.sel = [(hh.boot + 60, 'Power Unit #0x01', 'Power off/down', 'Asserted')]
    power_cap_decoy(c, c.hosts[1], 6)
    c.title = 'Every step waits ~1.5x longer since 19:00'
    c.reported = ''
    c.component = h.name
    return c


@case
def fx17(rng):
    """hbm_degradation on one GPU: correctable ECC storm, XID 92/63, row remap pending; mild straggler."""
    c = Case('fx-17', rng, 'hbm_degradation', '2026-04-25T08:00:00Z', 60, 'A100', 8, 8, 'InfiniBand', 200)
    c.driver = '535.183.01'
    fleet(c, names_node(12, 400))
    c.sources -= {'snmp', 'switch_cmd'}
    collect(c, racks(c, 'r03', 'r01')[:6])
    c.dmesg_style = 'journal'
    for h in c.hosts:
        h.dmesg_style = 'journal'
    noise(c, 6)
    on = window(c, 0.3)
    h = c.hosts[8]
    g = h.gpus[2]
    g.sbe = Ctr(3, 0.0, 14.0, on)
    g.sbe_agg_extra = 51
    g.remap = {'corrected': 1, 'uncorrected': 0, 'pending': True, 'failure': False}
    g.xid = G(0, 63, on + 300)
    straggle(g, 1.22, on)
    h.dmesg.append((on + 120, 'NVRM: Xid (PCI:0000:%02x:00): 92, pid=\'<unknown>\', name=<unknown>, High single-bit ECC error rate' % g.bus))
    h.dmesg.append((on + 300, 'NVRM: Xid (PCI:0000:%02x:00): 63, pid=%d, name=python3, Row Remapper: New row marked for remapping, reset gpu to activate.' % (g.bus, 77120)))
    h.nvml_events = [{'_t': on + 300, 'device': 2, 'type': 'XidCriticalError', 'data': 63, 'time': '%s' % __import__('engine').iso(on + 300)}]
    power_cap_decoy(c, c.hosts[0], 1)
    c.title = 'Step time +20% on 96-GPU A100 job'
    c.reported = ''
    c.component = '%s/gpu2' % h.name
    return c


@case
def fx18(rng):
    """hbm_degradation at scale: correctable ECC climbing on one GPU among 320 hosts in DCGM only; old static SBE and remap counts elsewhere; no XID, no compute column, no node data."""
    c = Case('fx-18', rng, 'hbm_degradation', '2026-05-06T00:30:00Z', 60, 'H100', 8, 8, 'InfiniBand')
    fleet(c, names_ip(320, 52, 10), racks_of=8)
    c.sources -= {'compute', 'snmp', 'switch_cmd', 'nodes', 'node_exporter'}
    for k in range(45):
        g = c.hosts[rng.randrange(320)].gpus[rng.randrange(8)]
        g.sbe = static(rng.randrange(1, 2000))
        if k % 4 == 0:
            g.remap = {'corrected': rng.randrange(1, 4), 'uncorrected': 0, 'pending': False, 'failure': False}
    for k in range(20):
        g = c.hosts[rng.randrange(320)].gpus[rng.randrange(8)]
        g.nvl['crc'][0] = static(rng.randrange(10, 9000))
    on = window(c, 0.2)
    h = c.hosts[211]
    g = h.gpus[7]
    g.sbe = Ctr(4, 0.0, 2.4, on)
    g.slow = G(1.0, 1.13, on)
    c.metric_pre = 30 * 60
    c.title = 'Job step time +12% since 00:40 (2560 GPUs), no alerts'
    c.reported = 'Only the Prometheus export of DCGM series was attached.'
    c.component = '%s/gpu7' % h.name
    return c


def watchdog_lines(c, t_hang, ranks, seq, numel=1048576, line=632):
    out = []
    tt = t_hang + 600
    for (r, h, g) in ranks:
        out.append((tt + 0.001 * r, '[rank%d]:[E%s ProcessGroupNCCL.cpp:%d] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, NumelIn=%d, NumelOut=%d, Timeout(ms)=600000) ran for 600%03d milliseconds before timing out.' % (
            r, glog(tt + 0.001 * r), line, r, seq, numel, numel, 10 + r % 80)))
    return out


def glog(t):
    import time as _t
    return _t.strftime('%m%d %H:%M:%S', _t.gmtime(t)) + '.%09d' % int((t % 1) * 1e9)


@case
def fx19(rng):
    """gpu_fell_off_bus: XID 79 in raw /dev/kmsg, NVML 'GPU is lost', sysfs Unknown/63; a spare host with an old lost GPU is the decoy."""
    c = Case('fx-19', rng, 'gpu_fell_off_bus', '2026-02-02T05:00:00Z', 50, 'H100', 8, 8, 'InfiniBand')
    c.dmesg_style = 'kmsg'
    fleet(c, names_short(7, 'gpu-f') + ['gpu-f090'], spare=1)
    for h in c.hosts:
        h.dmesg_style = 'kmsg'
    c.explicit_ranks = True
    c.sources -= {'snmp', 'switch_cmd'}
    collect(c, c.hosts[2:8])
    noise(c)
    on = window(c, 0.45)
    h = c.hosts[4]
    g = h.gpus[1]
    g.lost_at = on
    g.xid = G(0, 79, on)
    h.dmesg += [(on, 'NVRM: GPU at PCI:0000:%02x:00: %s' % (g.bus, g.uuid)),
                (on + 0.0001, 'NVRM: GPU Board Serial Number: %s' % g.serial),
                (on + 0.0002, "NVRM: Xid (PCI:0000:%02x:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus." % g.bus),
                (on + 0.0003, 'NVRM: GPU 0000:%02x:00.0: GPU has fallen off the bus.' % g.bus)]
    h.nvml_events = [{'_t': on, 'device': 1, 'type': 'XidCriticalError', 'data': 79, 'time': iso_(on)}]
    sp = c.hosts[7]
    c.decoy_hosts.append(sp)
    sg = sp.gpus[5]
    sg.lost_at = c.start - 5 * 86400
    sp.dmesg += [(sg.lost_at, "NVRM: Xid (PCI:0000:%02x:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus." % sg.bus)]
    sp.boot = c.start - 20 * 86400
    ranks = c.ranks()
    c.logs['train'] = watchdog_lines(c, on, ranks[::9], 88412)
    power_cap_decoy(c, c.hosts[1], 0)
    c.title = 'Training hung at 05:22, no progress for 10 minutes, watchdog fired'
    c.reported = 'job llm-13b-ablation stuck'
    c.component = '%s/gpu1' % h.name
    return c


def iso_(t):
    from engine import iso
    return iso(t)


@case
def fx20(rng):
    """gpu_fell_off_bus: journalctl lines, DCGM series stop, lspci rev ff; no topology ranks, no compute column."""
    c = Case('fx-20', rng, 'gpu_fell_off_bus', '2026-09-09T12:00:00Z', 40, 'A100', 8, 4, 'InfiniBand', 200)
    c.driver = '535.161.08'
    c.dmesg_style = 'journal'
    fleet(c, names_dc(6, 700, 'ord4'), ibdevs=['mlx5_0', 'mlx5_3', 'mlx5_6', 'mlx5_9'])
    for h in c.hosts:
        h.dmesg_style = 'journal'
    c.sources -= {'snmp', 'switch_cmd', 'compute'}
    noise(c)
    on = window(c, 0.5)
    h = c.hosts[3]
    g = h.gpus[6]
    g.lost_at = on
    g.xid = G(0, 79, on)
    h.dmesg += [(on - 2, 'pcieport 0000:%02x:02.0: AER: Uncorrected (Fatal) error received: 0000:%02x:00.0' % (g.bus - 2, g.bus)),
                (on, 'NVRM: Xid (PCI:0000:%02x:00): 79, pid=21877, name=python, GPU has fallen off the bus.' % g.bus),
                (on + 0.01, 'NVRM: GPU 0000:%02x:00.0: GPU has fallen off the bus.' % g.bus)]
    c.logs['train'] = watchdog_lines(c, on, c.ranks()[::5], 12055, line=607)
    c.hosts[1].gpus[3].xid = G(13)
    c.title = 'NCCL watchdog timeouts on all ranks; job restarted automatically twice'
    c.reported = ''
    c.component = '%s/gpu6' % h.name
    return c


@case
def fx21(rng):
    """nvlink_fault: XID 74 and NVLink replay/CRC/recovery counters growing on one GPU; straggler."""
    c = Case('fx-21', rng, 'nvlink_fault', '2026-10-15T23:10:00Z', 60, 'H100', 8, 8, 'InfiniBand')
    fleet(c, names_ip(8, 88, 4))
    c.sources -= {'snmp', 'switch_cmd'}
    c.dmesg_style = 'T'
    for h in c.hosts:
        h.dmesg_style = 'T'
    collect(c, c.hosts[:6])
    noise(c, 6)
    on = window(c, 0.3)
    h = c.hosts[2]
    g = h.gpus[4]
    for li in (3, 7, 11):
        g.nvl['crc'][li] = Ctr(10, 0.0, 55.0, on)
        g.nvl['replay'][li] = Ctr(0, 0.0, 12.0, on)
        g.nvl['recovery'][li] = Ctr(0, 0.0, 0.01, on)
    g.xid = G(0, 74, on + 900)
    h.dmesg.append((on + 900, 'NVRM: Xid (PCI:0000:%02x:00): 74, pid=51712, name=python3, NVLink: fatal error detected on link 7(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)' % g.bus))
    straggle(g, 1.28, on)
    c.nvlink_bw_family = True
    for hh in c.job_hosts:
        for gg in hh.gpus:
            gg.nvlink_bw = G(9.1e10, jit=0.05)
    g.nvlink_bw = G(9.1e10, 5.2e10, on, jit=0.05)
    power_cap_decoy(c, c.hosts[5], 2)
    c.title = 'Step time +30% after 23:25'
    c.reported = ''
    c.component = '%s/gpu4' % h.name
    return c


@case
def fx22(rng):
    """nvlink_fault at scale: CRC and replay counters growing on one GPU among 256 hosts (DCGM only); hundreds of static old counts; no XID."""
    c = Case('fx-22', rng, 'nvlink_fault', '2026-01-11T15:45:00Z', 60, 'H200', 8, 8, 'InfiniBand')
    fleet(c, names_fqdn(256, rng), racks_of=8)
    c.sources -= {'compute', 'snmp', 'switch_cmd', 'nodes', 'node_exporter'}
    c.dcgm_hostname_label = 'Hostname'
    for k in range(300):
        g = c.hosts[rng.randrange(256)].gpus[rng.randrange(8)]
        li = rng.randrange(18)
        g.nvl['crc'][li] = static(rng.randrange(1, 60000))
        g.nvl['replay'][li] = static(rng.randrange(0, 900))
        if k % 7 == 0:
            g.nvl['recovery'][li] = static(rng.randrange(1, 4))
    on = window(c, 0.25)
    h = c.hosts[97]
    g = h.gpus[3]
    for li in (5, 6):
        g.nvl['crc'][li] = Ctr(120, 0.0, 31.0, on)
        g.nvl['replay'][li] = Ctr(3, 0.0, 4.5, on)
    g.slow = G(1.0, 1.17, on)
    c.title = 'Iteration time +17% on 2048-GPU H200 job since 16:00'
    c.reported = 'No XIDs or alerts. Attaching Prometheus DCGM export.'
    c.component = '%s/gpu3' % h.name
    return c


@case
def fx23(rng):
    """nvlink_fault seen only in `nvidia-smi nvlink -e` before/after on 64 hosts (recovery + replay on one GPU); no DCGM, no compute."""
    c = Case('fx-23', rng, 'nvlink_fault', '2026-03-03T03:30:00Z', 45, 'H100', 8, 8, 'InfiniBand')
    fleet(c, names_node(64, 2001), racks_of=8)
    c.sources -= {'steps', 'compute', 'snmp', 'switch_cmd', 'dcgm'}
    for h in c.hosts:
        h.detail = 'lite'
    for k in range(70):
        g = c.hosts[rng.randrange(64)].gpus[rng.randrange(8)]
        li = rng.randrange(18)
        g.nvl['crc'][li] = static(rng.randrange(1, 3000))
        g.nvl['recovery'][li] = static(rng.randrange(0, 3))
    on = window(c, 0.3)
    h = c.hosts[41]
    g = h.gpus[6]
    g.nvl['recovery'][12] = Ctr(2, 0.0, 0.02, on)
    g.nvl['replay'][12] = Ctr(40, 0.0, 22.0, on)
    g.nvl['crc'][12] = Ctr(900, 0.0, 70.0, on)
    g.slow = G(1.0, 1.2, on)
    c.title = 'Step time +20% at 03:45, 512 GPUs'
    c.reported = 'Only the lightweight snapshot (nvml + nvlink -e) ran on the nodes.'
    c.component = '%s/gpu6' % h.name
    return c


@case
def fx24(rng):
    """silent_data_corruption: one rank's param_checksum disagrees with its data-parallel peers; no errors anywhere; decoys."""
    c = Case('fx-24', rng, 'silent_data_corruption', '2026-05-14T17:00:00Z', 60, 'H100', 8, 8, 'InfiniBand')
    fleet(c, names_short(16, 'a3-'))
    c.sources -= {'snmp', 'switch_cmd'}
    collect(c, c.hosts[4:10])
    noise(c, 6)
    on = window(c, 0.4)
    c.sdc = (61, on)
    c.extra_step_cols.append('checksum')
    power_cap_decoy(c, c.hosts[4], 3)
    c.hosts[8].gpus[1].sbe_agg_extra = 1200
    c.title = 'Eval loss regressed after 17:25 checkpoint; no crashes'
    c.reported = 'Replica consistency check flagged a mismatch in the nightly audit.'
    h = c.ranks()[61][1]
    c.component = '%s/gpu%d' % (h.name, c.ranks()[61][2].index)
    return c


@case
def fx25(rng):
    """silent_data_corruption: steps.csv.gz with rows shuffled and shuffled rank placement; a host with mild CPU pressure is a decoy."""
    c = Case('fx-25', rng, 'silent_data_corruption', '2026-11-20T08:40:00Z', 50, 'A100', 8, 8, 'Ethernet', 200)
    c.driver = '535.154.05'
    fleet(c, names_ip(8, 17, 128))
    c.build_fabric(1, 2, lambda i: 'leaf-x9', lambda i: 'spine-x%d' % (i + 1), sonic_host, sonic_up, sonic_spine)
    c.default_traffic()
    c.sources -= {'snmp', 'switch_cmd'}
    c.gz.add('steps')
    c.extra_step_cols.append('shuffle_rows')
    c.explicit_ranks = True
    order = [(h, g) for h in c.job_hosts for g in h.gpus]
    rng.shuffle(order)
    c.rank_order = [(r, h, g) for r, (h, g) in enumerate(order)]
    collect(c, c.hosts[:6])
    noise(c)
    on = window(c, 0.5)
    bad = [x for x in c.rank_order if x[1] is c.hosts[2]][0]
    c.sdc = (bad[0], on)
    c.hosts[5].cpu_some = G(14.0, jit=0.1)
    c.hosts[5].top_extra = [(9911, 'root', '20', '0', '2.1g', '1.2g', '12m', 'S', 310.0, 0.1, '51:10.02', 'dcgmi')]
    c.title = 'Loss spikes every few hundred steps since 09:05'
    c.reported = 'grad norm looks normal'
    c.component = '%s/gpu%d' % (bad[1].name, bad[2].index)
    return c


@case
def fx26(rng):
    """host_contention: a backup process saturates one host's CPUs; its 8 ranks are the slowest in compute_s."""
    c = Case('fx-26', rng, 'host_contention', '2026-06-11T01:00:00Z', 60, 'H100', 8, 8, 'InfiniBand')
    fleet(c, names_dc(12, 4400, 'sea1'))
    c.sources -= {'snmp', 'switch_cmd'}
    collect(c, c.hosts[:6])
    noise(c)
    on = window(c, 0.3)
    h = c.hosts[2]
    h.cpu_some = G(0.5, 71.0, on, jit=0.05)
    h.load1 = G(38.0, 240.0, on, jit=0.03)
    h.cpu_busy = G(0.22, 0.97, on)
    h.top_extra = [(88123, 'root', '20', '0', '4.1g', '2.2g', '9m', 'R', 9120.0, 0.1, '1920:44.91', 'restic'),
                   (88130, 'root', '20', '0', '0.9g', '0.2g', '4m', 'R', 3020.0, 0.0, '455:10.11', 'zstd')]
    for g in h.gpus:
        straggle(g, 1.33, on)
        g.util = G(g.util.normal, 71, on)
    c.hosts[7].cpu_some = G(6.0, jit=0.2)
    power_cap_decoy(c, c.hosts[4], 5)
    c.title = 'Step time +33% starting 01:18'
    c.reported = 'No GPU errors.'
    c.component = h.name
    return c


@case
def fx27(rng):
    """host_contention from memory pressure (kswapd, PSI memory full) on one host; no compute column; RoCE, 4 NICs."""
    c = Case('fx-27', rng, 'host_contention', '2026-07-02T20:30:00Z', 50, 'A100', 8, 4, 'Ethernet', 200)
    c.driver = '535.104.12'
    fleet(c, names_node(8, 70), netdevs=['enp12s0np0', 'enp75s0np0', 'enp141s0np0', 'enp204s0np0'])
    c.build_fabric(1, 2, lambda i: 'leaf01-pod2', lambda i: 'spine0%d-pod2' % (i + 1), sonic_host, sonic_up, sonic_spine)
    c.default_traffic()
    c.sources -= {'snmp', 'compute'}
    noise(c)
    on = window(c, 0.35)
    h = c.hosts[6]
    h.mem_some = G(0.0, 48.0, on, jit=0.05)
    h.mem_full = G(0.0, 31.0, on, jit=0.05)
    h.cpu_some = G(0.5, 22.0, on, jit=0.1)
    h.load1 = G(38.0, 96.0, on, jit=0.05)
    h.top_extra = [(131, 'root', '20', '0', '0', '0', '0', 'R', 99.7, 0.0, '88:12.40', 'kswapd0'),
                   (132, 'root', '20', '0', '0', '0', '0', 'R', 98.1, 0.0, '84:55.02', 'kswapd1')]
    h.dmesg.append((on + 400, 'python3 invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0, oom_score_adj=0'))
    h.dmesg.append((on + 400.2, 'Out of memory: Killed process 90123 (pt_data_worker) total-vm:81233444kB, anon-rss:70012344kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:141220kB oom_score_adj:0'))
    for g in h.gpus:
        straggle(g, 1.27, on)
    c.title = 'Slowdown ~25% since 20:50 on 64-GPU job'
    c.reported = ''
    c.component = h.name
    return c


@case
def fx28(rng):
    """input_pipeline_stall: every rank waits equally for data (no straggler in compute_s); power-capped GPUs and data-loader warnings."""
    c = Case('fx-28', rng, 'input_pipeline_stall', '2026-04-04T10:00:00Z', 60, 'H100', 8, 8, 'InfiniBand')
    fleet(c, names_short(12, 'gpu-k'))
    c.sources -= {'snmp', 'switch_cmd'}
    collect(c, c.hosts[3:9])
    noise(c)
    on = window(c, 0.3)
    c.input_wait = G(0.02, 1.45, on, jit=0.25)
    gpu_util_scale(c, 0.62, on)
    for hh, gi in ((c.hosts[3], 1), (c.hosts[8], 6)):
        power_cap_decoy(c, hh, gi)
    c.logs['dataloader'] = [(on + 60 * k + 7, '%s [WARNING] data: shard fetch from s3://corpus-v7/train/shard-%05d.tar took %.1fs (retries=%d)' % (
        iso_(on + 60 * k + 7), 12000 + k, 9.0 + 7 * h01(c.id, k), 1 + k % 3)) for k in range(0, 40, 3)]
    alert(c, 'JobGPUUtilizationLow', {'job': c.job_name, 'namespace': 'training'}, on + 600,
          'Mean GPU utilization of the job below 70% for 10m')
    c.title = 'Tokens/s down 35% since 10:18; GPU util dashboards dropped'
    c.reported = 'Storage team says object store is fine.'
    c.component = 'job'
    return c


@case
def fx29(rng):
    """input_pipeline_stall with no compute column: only the trainer's data_time and a fleet-wide GPU util dip show it."""
    c = Case('fx-29', rng, 'input_pipeline_stall', '2026-12-03T04:00:00Z', 45, 'H200', 8, 8, 'Ethernet', 400)
    fleet(c, names_fqdn(8, rng))
    c.build_fabric(1, 2, lambda i: 'l1', lambda i: 's%d' % (i + 1), arista_host, arista_up, arista_host)
    c.default_traffic()
    c.sources -= {'compute', 'switch_cmd'}
    collect(c, c.hosts[:5])
    noise(c)
    on = window(c, 0.25)
    c.input_wait = G(0.03, 1.9, on, jit=0.3)
    c.logs['_opts'] = ['data_time']
    gpu_util_scale(c, 0.55, on)
    for h in c.job_hosts:
        h.io_some = G(0.2, 18.0, on, jit=0.2)
    power_cap_decoy(c, c.hosts[2], 0)
    c.title = 'MFU from 44% to 26% since 04:10'
    c.reported = 'Container image was updated last night.'
    c.component = 'job'
    return c


@case
def fx30(rng):
    """nccl_misconfiguration: NCCL_IB_HCA restricts NCCL to one NIC of eight from step 1; the busy NIC shows high xmit wait."""
    c = Case('fx-30', rng, 'nccl_misconfiguration', '2026-08-21T06:00:00Z', 60, 'H100', 8, 8, 'InfiniBand')
    fleet(c, names_short(8, 'gpu-m'))
    c.sources -= {'snmp', 'switch_cmd'}
    collect(c, c.hosts[:6])
    noise(c)
    c.nccl_hcas = ['mlx5_0']
    c.nccl_env = ['NCCL_IB_HCA set by environment to mlx5_0', 'NCCL_IB_TIMEOUT set by environment to 22.']
    c.nccl_transport = 'NET/IB/0/GDRDMA'
    c.base_comm = G(2.6, jit=0.04)
    c.first_step = 0
    for h in c.job_hosts:
        for n in h.nics:
            if n.ibdev == 'mlx5_0':
                n.ctr['port_xmit_data'] = Ctr(n.ctr['port_xmit_data'].b, 1.15e10)
                n.ctr['port_rcv_data'] = Ctr(n.ctr['port_rcv_data'].b, 1.15e10)
                n.ctr['port_xmit_wait'] = Ctr(n.ctr['port_xmit_wait'].b, 4.2e7)
            else:
                for k in ('port_xmit_data', 'port_rcv_data'):
                    n.ctr[k] = Ctr(n.ctr[k].b, 1.1e3)
                n.ctr['port_xmit_wait'] = static(n.ctr['port_xmit_wait'].b)
    power_cap_decoy(c, c.hosts[1], 4)
    c.title = 'New 64-GPU job 3x slower than the same recipe on the old cluster'
    c.reported = 'Launched with the migrated launcher scripts. Inter-node links on mlx5_0 look saturated.'
    c.component = 'job'
    return c


@case
def fx31(rng):
    """nccl_misconfiguration on RoCE: traffic on 2 of 8 rails from the first step, no NCCL INFO logging; seen in counters only."""
    c = Case('fx-31', rng, 'nccl_misconfiguration', '2026-02-26T13:30:00Z', 50, 'H100', 8, 8, 'Ethernet', 400)
    nd = ['ens%dnp0' % (i + 1) for i in range(8)]
    ib = ['mlx5_%d' % (i + 1) for i in range(8)]
    fleet(c, names_dc(8, 9000, 'ams3'), ibdevs=ib, netdevs=nd)
    c.build_fabric(2, 2, lambda i: 'rail-leaf-%d' % (i + 1), lambda i: 'rail-spine-%d' % (i + 1), sonic_host, sonic_up, sonic_spine)
    c.logs['_opts'] = ['nccl_quiet']
    c.first_step = 0
    c.base_comm = G(1.9, jit=0.04)
    for h in c.job_hosts:
        for n in h.nics:
            if n.ibdev in ('mlx5_1', 'mlx5_2'):
                for k in ('port_xmit_data', 'port_rcv_data'):
                    n.ctr[k] = Ctr(n.ctr[k].b, 8.4e9)
                n.hw['np_cnp_sent'] = Ctr(n.hw['np_cnp_sent'].b, 900.0)
            else:
                for k in ('port_xmit_data', 'port_rcv_data'):
                    n.ctr[k] = Ctr(n.ctr[k].b, 2.0e3)
                n.hw['np_cnp_sent'] = static(n.hw['np_cnp_sent'].b)
                n.hw['rp_cnp_handled'] = static(n.hw['rp_cnp_handled'].b)
    c.default_traffic()
    c.sources -= {'switch_cmd'}
    collect(c, c.hosts[2:7])
    noise(c)
    c.logs['train'] = [(c.start + 30, '%s [INFO] launcher: env NCCL_IB_HCA==mlx5_1,mlx5_2 NCCL_SOCKET_IFNAME=bond0 NCCL_IB_GID_INDEX=3' % iso_(c.start + 30))]
    c.title = 'Fresh launch on ams3 pod runs at 45% of expected tokens/s'
    c.reported = 'Same container image as on iad1.'
    c.component = 'job'
    return c


@case
def fx32(rng):
    """nccl_misconfiguration of transport: NCCL_P2P_DISABLE=1 sends intra-node traffic through SHM; NVLink idle from step 1."""
    c = Case('fx-32', rng, 'nccl_misconfiguration', '2026-10-28T19:00:00Z', 40, 'H200', 8, 8, 'InfiniBand')
    fleet(c, names_ip(6, 101, 9))
    c.sources -= {'snmp', 'switch_cmd', 'compute'}
    noise(c)
    c.first_step = 0
    c.p2p = 'SHM/direct/direct'
    c.nccl_env = ['NCCL_P2P_DISABLE set by environment to 1', 'NCCL_IB_TIMEOUT set by environment to 20.']
    c.base_comm = G(1.4, jit=0.04)
    c.nvlink_bw_family = True
    for h in c.job_hosts:
        for g in h.gpus:
            g.nvlink_bw = G(1.2e6, jit=0.5)
    power_cap_decoy(c, c.hosts[3], 7)
    c.title = 'New H200 pool: allreduce-heavy job 2x slower than on H100 pool'
    c.reported = 'Same training recipe as on the H100 pool.'
    c.component = 'job'
    return c


@case
def fx33(rng):
    """healthy: a relaunch (gap, rerun steps) and an idle spare host in power-saving link states."""
    c = Case('fx-33', rng, 'healthy', '2026-01-30T02:40:00Z', 60, 'H100', 8, 8, 'InfiniBand')
    fleet(c, names_short(7, 'gpu-s') + ['gpu-s099'], spare=1)
    c.explicit_ranks = True
    c.sources -= {'snmp', 'switch_cmd'}
    collect(c, c.hosts[3:8])
    noise(c, 6)
    t_stop = window(c, 0.4)
    c.relaunch = (t_stop, t_stop + 540, 6)
    c.logs['train'] = [(t_stop + 1, '%s [INFO] scheduler: job preempted by higher-priority reservation; checkpoint step resume' % iso_(t_stop + 1)),
                       (t_stop + 540, '%s [INFO] resumed from checkpoint' % iso_(t_stop + 540))]
    sp = c.hosts[7]
    c.decoy_hosts.append(sp)
    for n in sp.nics:
        n.ctr['port_xmit_wait'] = static(n.ctr['port_xmit_wait'].b)
    c.title = 'Throughput dip at 03:05 and a gap in the loss curve; is the fleet OK?'
    c.reported = 'gpu-s099 shows GPUs at PCIe Gen1 in the inventory dashboard.'
    c.component = None
    return c


@case
def fx34(rng):
    """healthy: a config change (global batch 1024 -> 1536) raises step time with tokens/s unchanged; warm GPUs without throttle reasons."""
    c = Case('fx-34', rng, 'healthy', '2026-09-25T11:20:00Z', 60, 'A100', 8, 8, 'InfiniBand', 200)
    c.driver = '535.154.05'
    fleet(c, names_node(8, 610))
    c.sources -= {'snmp', 'switch_cmd'}
    collect(c, c.hosts[:5])
    noise(c, 6)
    t = window(c, 0.45)
    c.batch_change = (t, 1.5)
    c.extra_step_cols.append('tokens')
    c.logs['train'] = [(t - 5, '%s [INFO] config: reload from ckpt with overrides global_batch_size=1536 (was 1024), lr warmup 200' % iso_(t - 5))]
    for h in c.hosts[:4]:
        for g in h.gpus[::3]:
            g.temp = G(83, jit=0.01)
            g.reasons = G(0x0)
    c.title = 'Step time jumped 50% at 11:47'
    c.reported = 'Some GPUs run hot (83C).'
    c.component = None
    return c


@case
def fx35(rng):
    """healthy: a few correctable AER on a full-width link, old static error counters, SW power cap on many GPUs."""
    c = Case('fx-35', rng, 'healthy', '2026-06-27T07:00:00Z', 60, 'H100', 8, 8, 'Ethernet', 400)
    fleet(c, names_fqdn(8, rng))
    c.build_fabric(1, 2, lambda i: 'tor-17', lambda i: 'spn-%d' % (i + 1), cumulus_host, cumulus_up, cumulus_host)
    c.default_traffic()
    c.sources -= {'snmp'}
    collect(c, c.hosts[1:7])
    noise(c, 8)
    h = c.hosts[3]
    h.gpus[2].aer = {'Receiver Error': 4, 'Bad TLP': 1, 'Replay Timer Timeout': 0}
    h.dmesg.append((window(c, 0.5), 'pcieport 0000:%02x:01.0: AER: Corrected error message received from 0000:%02x:00.0' % (h.gpus[2].bus - 1, h.gpus[2].bus)))
    h.dmesg.append((window(c, 0.5) + 0.01, 'nvidia 0000:%02x:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)' % h.gpus[2].bus))
    for hh in c.hosts:
        for g in hh.gpus:
            if h01(c.id, hh.name, g.index) < 0.6:
                power_cap_decoy(c, hh, g.index)
    c.base_comm = G(0.55, jit=0.09)
    alert(c, 'NodePCIeCorrectableErrors', {'instance': '%s:9100' % h.name}, window(c, 0.5) + 60,
          'Correctable PCIe errors reported on %s' % h.name)
    c.title = 'p99 step time jitter up; please check hardware'
    c.reported = 'AER messages in dmesg on one node.'
    c.component = None
    return c


@case
def fx36(rng):
    """healthy at 128 hosts (DCGM + node_exporter only): static old counts, an idle spare rack, MFU dashboard artifact."""
    c = Case('fx-36', rng, 'healthy', '2026-03-16T22:00:00Z', 60, 'H100', 8, 8, 'InfiniBand')
    fleet(c, names_dc(136, 6000, 'dfw2'), racks_of=8, spare=8)
    c.explicit_ranks = True
    c.sources -= {'snmp', 'switch_cmd', 'nodes'}
    for k in range(40):
        g = c.hosts[rng.randrange(136)].gpus[rng.randrange(8)]
        g.sbe = static(rng.randrange(1, 300))
        g.nvl['crc'][rng.randrange(18)] = static(rng.randrange(1, 8000))
    for k in range(30):
        n = c.hosts[rng.randrange(136)].nics[rng.randrange(8)]
        n.ctr['symbol_error'] = static(rng.randrange(1, 3000))
        n.ctr['link_downed'] = static(rng.randrange(1, 4))
    c.title = 'MFU panel shows a 20% drop at 22:30'
    c.reported = 'Grafana MFU panel dropped; job logs look normal to me.'
    c.component = None
    return c


# ============================================================================================ main
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument('--out', required=True)
    ap.add_argument('--only', default=None, help='comma-separated case ids (debugging)')
    a = ap.parse_args(argv)
    only = set(a.only.split(',')) if a.only else None
    os.makedirs(a.out, exist_ok=True)
    for i, fn in enumerate(CASES):
        rng = random.Random(27000 + i)
        c = fn(rng)
        cap_collect(c, c.collect_cap)
        assert c.id == 'fx-%02d' % (i + 1), (c.id, i)
        if only and c.id not in only:
            continue
        out = Out()
        write_bundle(c, out)
        d = os.path.join(a.out, c.id)
        if os.path.exists(d):
            shutil.rmtree(d)
        for rel in sorted(out.files):
            p = os.path.join(d, 'bundle', rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, 'wb') as f:
                f.write(out.files[rel])
        with open(os.path.join(d, 'truth.json'), 'w') as f:
            f.write(json.dumps({'root_cause': c.root_cause, 'component': c.component}, sort_keys=True) + '\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
