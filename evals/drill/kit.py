"""Building blocks shared by the cases: fleets, wiring, faults and decoys, log text."""
from fleet import Case, nz, val, iso, dt

DAY = 86400


def fleet(C, names, model="H100", driver="550.90.07", ll="InfiniBand", nnic=8, per_leaf=4, leaf_fmt="leaf-{:02d}",
          port_fmt="1/{}", nd=(), spares=(), dstyle="plain", kernel_old=False, rate=None, netdev_fmt=None,
          racks=4, spine=None, uplinks=4, rate_Bps=2.2e9, nic_names=None):
    """hosts in order; nd: names with node data; spares: hosts outside the job"""
    hs = []
    for i, nm in enumerate(names):
        nf = netdev_fmt or ("ibp{bus:d}s0" if ll == "InfiniBand" else "enp{bus:d}s0np0")
        h = C.host(nm, model=model, nnic=nnic, ll=ll, rack="r%02d" % (1 + i * racks // max(1, len(names))), driver=driver,
                   kernel_old=kernel_old, dstyle=dstyle, node_data=nm in nd, in_job=nm not in spares, rate=rate,
                   netdev_fmt=nf, nic_names=nic_names)
        hs.append(h)
    idx = {h["name"]: i for i, h in enumerate(hs)}
    C.wire(hs, lambda h, n: leaf_fmt.format(1 + idx[h["name"]] // per_leaf),
           lambda h, n: port_fmt.format(1 + (idx[h["name"]] % per_leaf) * nnic + h["nics"].index(n)), rate_Bps=rate_Bps)
    if spine:
        leaves = sorted({leaf_fmt.format(1 + i // per_leaf) for i in range(len(hs))})
        for li, lf in enumerate(leaves):
            C.switches[lf]["tier"] = "leaf"
            for u in range(uplinks):
                sp = spine.format(1 + u % 2)
                C.switch(sp, "spine")
                lp = port_fmt.format(per_leaf * nnic + 1 + u)
                spp = port_fmt.format(1 + li * (uplinks // 2 or 1) + u // 2)
                b = rate_Bps * per_leaf * nnic / uplinks * 0.5
                C.link(("sw", lf, lp), ("sw", sp, spp), C.ctr(int(7e13 + 1e12 * nz(lf, u)), b * (1 + 0.02 * nz(lf, lp))),
                       C.ctr(int(7e13 + 1e12 * nz(sp, u)), b * (1 + 0.02 * nz(sp, spp))), kind="isl")
        for s in C.switches.values():
            if s["name"].startswith(spine[:3]):
                s["tier"] = "spine"
    return hs


def swcap(C, hosts, frac=0.6, drop=(0.015, 0.04)):
    """the normal SW power cap: busy GPUs drawing their limit at a slightly lower clock"""
    for h in hosts:
        for g in h["gpus"]:
            if not g["busy"] or g.get("faulty"):
                continue
            if (abs(nz(g["uuid"], 9)) < frac):
                d = drop[0] + (drop[1] - drop[0]) * abs(nz(g["uuid"], 11))
                g["clk"] = int(g["maxclk"] * (1 - d) / 15) * 15
                g["power"] = round(g["limit"] * (0.985 + 0.01 * abs(nz(g["uuid"], 12))), 2)
                g["reasons"] = 0x4
                g["power_ns"] = C.ctr(int(3e12 * abs(nz(g["uuid"]))), 0.35e9)
                # the cap costs its GPU this much compute and no more
                g["slow"] = round(1.0 / (1 - d * 0.6), 4)


def throttle(C, h, g, clk, reasons, temp=None, power=None, t0=None, t1=None, compute_bound=0.92):
    t0 = t0 or C.T0
    g["faulty"] = True
    def sp(a, b):
        return ("w", a, b, t0, t1) if t1 else ("s", a, b, t0)
    a_clk = val(g["clk"], C.M0)
    g["clk"] = sp(a_clk, clk)
    g["reasons"] = sp(val(g["reasons"], C.M0), reasons)
    if temp is not None:
        g["temp"] = sp(val(g["temp"], C.M0), temp)
    if power is not None:
        g["power"] = sp(val(g["power"], C.M0), power)
    f = 1 + compute_bound * (g["maxclk"] / clk - 1)
    g["slow"] = sp(val(g["slow"], C.M0) if not isinstance(g["slow"], tuple) else 1.0, round(f, 4))
    if reasons & 0x40 or reasons & 0x20:
        g["therm_ns"] = ("c", 0, 0, 0.9e9, t0, C.M0) if not t1 else ("c", 0, 0, 0, t0, C.M0)
    return f


def old_xid(C, h, g, code, days, msg=None):
    msgs = {13: "Graphics SM Warp Exception on (GPC 3, TPC 1, SM 0): Out Of Range Address",
            31: "Ch 0000002a, intr 10000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_1 faulted @ 0x7f1c_a4000000. Fault is of type FAULT_PDE ACCESS_TYPE_READ",
            43: "Ch 00000020, engmask 00000101",
            45: "Ch 0000000a"}
    t = C.S - days * DAY - int(3600 * abs(nz(g["uuid"], code)))
    if t > h["boot"]:
        C.ev(h, t, "NVRM: Xid (PCI:0000:%02x:00): %d, pid=%d, name=python3, %s" % (g["bus"], code, 20000 + code * 31, msg or msgs[code]))
    g["xid"] = code


def aer_few(C, h, g, n=3):
    g["aer"] = n
    for k in range(n):
        t = C.S - 4 * DAY + k * 9000
        C.ev(h, t, "pcieport 0000:%02x:01.0: AER: Corrected error message received from 0000:%02x:00.0" % (g["bus"] - 2, g["bus"]))
        C.ev(h, t + 0.0001, "nvidia 0000:%02x:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)" % g["bus"])
        C.ev(h, t + 0.0002, "nvidia 0000:%02x:00.0:   device [10de:2330] error status/mask=00000001/0000e000" % g["bus"])
        C.ev(h, t + 0.0003, "nvidia 0000:%02x:00.0:    [ 0] RxErr                  (First)" % g["bus"])


def static_ecc(g, sbe, remap=None):
    g["sbe"] = sbe
    if remap:
        g["remap"] = remap


def nccl_init(C, h, ranks, hcas, ll="IB", env=(), version="2.19.3", cuda="12.2", lines_per=1):
    L = ["NCCL version %s+cuda%s" % (version, cuda)]
    pid = 51200 + (h["boot"] % 700)
    for i, (r, g) in enumerate(ranks):
        p = "%s:%d:%d [%d]" % (h["name"], pid + i, pid + 400 + i, g["idx"])
        L.append("%s NCCL INFO Bootstrap : Using bond0:10.%d.%d.%d<0>" % (p, 20 + (h["boot"] % 3), (h["boot"] // 7) % 250, 10 + i))
        for e in env:
            L.append("%s NCCL INFO %s set by environment to %s." % (p, e[0], e[1]))
        L.append("%s NCCL INFO NET/IB : Using %s [RO]; OOB bond0:10.%d.%d.%d<0>" % (
            p, " ".join("[%d]%s:1/%s" % (k, hc, ll) for k, hc in enumerate(hcas)), 20 + (h["boot"] % 3), (h["boot"] // 7) % 250, 10 + i))
        L.append("%s NCCL INFO Using network IB" % p)
        L.append("%s NCCL INFO comm 0x55%08x rank %d nranks %d cudaDev %d nvmlDev %d busId %x000 commId 0x5ae77eb5ea4ec1ee - Init COMPLETE" % (
            p, (pid * 2654435761) % 2 ** 32, r, len(C.rank_map()), g["idx"], g["idx"], g["bus"]))
    return L


def train_log(C, every=600, fmt="[{ts}] iter {step:>7} | loss {loss:.4f} | tokens/s/gpu {tps:,.0f} | mfu {mfu:.1f}%", extra=()):
    """progress lines derived from the same step model as steps.csv"""
    st = C.steps
    rm = C.rank_map()
    slow = [(r, h, g) for r, h, g in rm if g["slow"] != 1.0 or h.get("slow", 1.0) != 1.0]
    t = st["job_start"] or (C.M0 + 120)
    out = []
    step = st.get("first_step", 1)
    nxt = t
    end = min(C.E, st["hang_at"] or C.E)
    base = st["c0"] + st["m0"]
    while t < end:
        fmax = 1.0
        for r, h, g in slow:
            f = val(g["slow"], t) * val(h.get("slow", 1.0), t)
            fmax = max(fmax, f)
        dur = st["c0"] * fmax * (1 + 0.004 * nz("fx", step)) + st["m0"] * val(st["comm"], t) + val(st["data_wait"], t) + 0.02 * abs(nz("j", step))
        if t >= nxt:
            out.append(fmt.format(ts=dt(t).strftime("%Y-%m-%d %H:%M:%S"), step=step, loss=2.31 * (0.9994 ** (step / 10.0)),
                                  tps=st.get("tps", 3900) * base / dur, mfu=st.get("mfu", 48.0) * base / dur, dur=dur))
            nxt += every
        t += dur
        step += 1
    for e in extra:
        out.append(e)
    return out
