"""Shared fleet builders and fault helpers for the keystone cases."""
from ksfleet import Ctr

NAMERS = {
    "dash": lambda i: "gpu-a%03d" % (i + 11),
    "rack": lambda i: "h100-r%02d-n%02d" % (i // 4 + 3, i % 4 + 1),
    "fqdn": lambda i: "gpu%04d.dc3.internal" % (1011 + i),
    "ip": lambda i: "10-90-43-%d" % (141 + i),
    "node": lambda i: "node%04d" % (120 + i),
    "dgx": lambda i: "dgx-b%02d" % (i + 1),
    "sea": lambda i: "sea1-gpu-%03d" % (200 + i * 3),
}

PORTS = {
    "sonic": lambda k: "Ethernet%d" % (k * 4),
    "cumulus": lambda k: "swp%d" % (k + 1),
    "eos": lambda k: "Ethernet%d/1" % (k + 1),
    "ib": lambda k: "%d" % (k + 1),
}


def roce_netdev(j, bus):
    return "enp%ds0np0" % bus


def eth_netdev(j, bus):
    return "eth%d" % (j + 2)


def build(case, n, model="H100", ngpu=8, nnic=8, ll="InfiniBand", naming="dash", ports="sonic",
          per_leaf=8, spines=2, uplinks_per_spine=2, spares=0, netdev=None, sonic=True, leafname="leaf-%02d",
          spinename="spine-%02d", place=True):
    name = NAMERS[naming]
    pn = PORTS[ports]
    hosts = []
    leaves = []
    nleaf = (n + spares + per_leaf - 1) // per_leaf
    for li in range(nleaf):
        leaves.append(case.add_switch(leafname % (li + 1), "leaf", sonic))
    sp = [case.add_switch(spinename % (k + 1), "spine", sonic) for k in range(spines)]
    for i in range(n + spares):
        busy = i < n
        h = case.add_host(name(i), "r%02d" % (i // 4 + 1), model, ngpu, nnic, ll,
                          netdev or (roce_netdev if ll == "Ethernet" else None), busy)
        leaf = leaves[i // per_leaf]
        slot = i % per_leaf
        for nic in h.nics:
            case.cable(nic, leaf, pn(slot * nnic + nic.idx))
        hosts.append(h)
    base = per_leaf * nnic
    for li, leaf in enumerate(leaves):
        k = 0
        for si, s in enumerate(sp):
            for u in range(uplinks_per_spine):
                case.uplink(leaf, pn(base + k), s, pn(li * uplinks_per_spine + u))
                k += 1
    if place:
        case.place(hosts[:n])
    return hosts[:n], hosts[n:], leaves, sp


def throttle(case, g, onset, clk, reasons, temp=None, power=None, expo=0.85):
    g.fault = (onset, clk, reasons, temp if temp is not None else g.temp, power if power is not None else g.power)
    g.slow.append((onset, (g.clk / float(clk)) ** expo))


def alert(name, labels, summary, t, sev="warning"):
    import time
    lab = {"alertname": name, "severity": sev}
    lab.update(labels)
    import zlib
    fp = "%08x%08x" % (zlib.crc32(name.encode()), zlib.crc32("".join(sorted(labels.values())).encode()))
    return {"status": "firing", "labels": lab, "annotations": {"summary": summary},
            "startsAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t)), "endsAt": "0001-01-01T00:00:00Z",
            "generatorURL": "http://prometheus-0:9090/graph?g0.expr=" + name, "fingerprint": fp[:16]}


def old_xid(case, h, g, days, code, msg):
    t = case.S - days * 86400 - 3711
    h.dmesg.append((t, "NVRM: GPU at PCI:0000:%02x:00: %s" % (g.bus, g.uuid)))
    h.dmesg.append((t + 0.0001, "NVRM: Xid (PCI:0000:%02x:00): %d, %s" % (g.bus, code, msg)))
    g.xid_last = code


def pause_link(a, b):
    """Port a transmits what port b receives: make them one counter."""
    b.rx_pfc[3] = a.tx_pfc[3]
