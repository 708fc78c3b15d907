"""Fleet model and bundle writers for the frontier evaluation set (stdlib only, deterministic).

Every quantity is defined once (a counter as a piecewise-linear function of time, a gauge as a
normal/fault value with deterministic jitter) and every source that prints it reads that one
definition, so the same counter read in two sources agrees.
"""
import calendar
import gzip
import hashlib
import json
import time

MODELS = {
    'A100': dict(name='NVIDIA A100-SXM4-80GB', sm=1410, mem=1593, plim=400, gen=4, busy_w=(360, 399),
                 idle_w=61, dev='20b2'),
    'H100': dict(name='NVIDIA H100 80GB HBM3', sm=1980, mem=2619, plim=700, gen=5, busy_w=(610, 698),
                 idle_w=72, dev='2330'),
    'H200': dict(name='NVIDIA H200', sm=1980, mem=3201, plim=700, gen=5, busy_w=(620, 699),
                 idle_w=76, dev='2335'),
}
GEN_SPEED = {1: '2.5 GT/s PCIe', 2: '5.0 GT/s PCIe', 3: '8.0 GT/s PCIe', 4: '16.0 GT/s PCIe',
             5: '32.0 GT/s PCIe'}
GEN_SPEED_OLD = {1: '2.5 GT/s', 2: '5 GT/s', 3: '8 GT/s', 4: '16 GT/s', 5: '32 GT/s'}
GEN_LSPCI = {1: '2.5GT/s', 2: '5GT/s', 3: '8GT/s', 4: '16GT/s', 5: '32GT/s'}
GPU_BUSES = [0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb]
NIC_BUSES = [0x1a, 0x2c, 0x3c, 0x5e, 0x9c, 0xad, 0xbc, 0xdc]


def iso(t):
    return time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(t))


def ts(s):
    return calendar.timegm(time.strptime(s, '%Y-%m-%dT%H:%M:%SZ'))


def h01(*parts):
    """Deterministic value in [0,1) from the parts (no RNG state)."""
    d = hashlib.sha256('|'.join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(d[:6], 'big') / float(1 << 48)


class Ctr:
    """Monotonic counter: value b at window start, rate r1/s until onset, r2/s after (r1 before start)."""

    def __init__(self, b=0, r1=0.0, r2=None, onset=None, steps=()):
        self.b, self.r1 = int(b), float(r1)
        self.r2 = self.r1 if r2 is None else float(r2)
        self.onset = onset
        self.steps = list(steps)  # (t, jump) step increments (flaps)
        self.start = None

    def at(self, t, start):
        on = self.onset if self.onset is not None else 1e18
        if t <= on:
            v = self.b + self.r1 * (t - start)
        else:
            v = self.b + self.r1 * (on - start) + self.r2 * (t - on)
        for (tj, j) in self.steps:
            if t >= tj:
                v += j
        return max(0, int(v))


def static(v):
    return Ctr(v, 0.0)


class G:
    """Gauge: normal value, fault value from onset, relative jitter."""

    def __init__(self, normal, fault=None, onset=None, jit=0.0, until=None):
        self.normal, self.fault, self.onset, self.jit, self.until = normal, fault, onset, jit, until

    def at(self, t, key=''):
        v = self.normal
        if self.fault is not None and self.onset is not None and t >= self.onset and (
                self.until is None or t < self.until):
            v = self.fault
        if self.jit and isinstance(v, (int, float)):
            v = v * (1 + self.jit * (2 * h01(key, t) - 1))
        return v


class GPU:
    def __init__(self, host, index, model, rng, busy=True):
        m = MODELS[model]
        self.host, self.index, self.model, self.m = host, index, model, m
        self.bus = GPU_BUSES[index % 8] if index < 8 else 0x10 + index
        self.uuid = 'GPU-%08x-%04x-%04x-%04x-%012x' % (rng.getrandbits(32), rng.getrandbits(16), rng.getrandbits(16),
                                                       rng.getrandbits(16), rng.getrandbits(48))
        self.serial = str(1650000000000 + rng.randrange(10 ** 9))
        self.busy = busy
        if busy:
            capped = rng.random() < 0.35
            self.sm = G(m['sm'] - (rng.randrange(60, 180) if capped else rng.randrange(0, 30)), jit=0.01)
            self.power = G(m['plim'] - rng.randrange(1, 6) if capped else rng.randrange(*m['busy_w']), jit=0.01)
            self.reasons = G(0x4 if capped else 0x0)
            self.temp = G(rng.randrange(52, 72), jit=0.02)
            self.util = G(rng.randrange(96, 101))
            self.tensor = G(round(0.42 + rng.random() * 0.06, 3), jit=0.02)
            self.power_viol = Ctr(rng.randrange(10 ** 9, 10 ** 11), 3e8 if capped else 0)
            self.gen = m['gen']
        else:  # idle spare: power-saving link state, idle reason
            self.sm = G(345 if model != 'A100' else 210)
            self.power = G(m['idle_w'], jit=0.02)
            self.reasons = G(0x1)
            self.temp = G(rng.randrange(29, 36))
            self.util = G(0)
            self.tensor = G(0.0)
            self.power_viol = static(0)
            self.gen = 1
        self.max_gen, self.width, self.max_width = m['gen'], 16, 16
        self.plim = m['plim']
        self.thermal_viol = static(0)
        self.sbe = static(0)
        self.dbe = static(0)
        self.sbe_agg_extra = 0
        self.remap = {'corrected': 0, 'uncorrected': 0, 'pending': False, 'failure': False}
        self.nvl = {k: [static(0) for _ in range(18 if model != 'A100' else 12)] for k in ('crc', 'replay', 'recovery')}
        self.pcie_replay = static(0)
        self.xid = G(0)
        self.lost_at = None
        self.slow = G(1.0)
        self.aer = {}  # name -> count (static)
        self.nvlink_bw = None

    def pci_nvml(self):
        return '00000000:%02X:00.0' % self.bus

    def pci_sys(self):
        return '0000:%02x:00.0' % self.bus

    def lost(self, t):
        return self.lost_at is not None and t >= self.lost_at


class NIC:
    def __init__(self, host, i, ibdev, netdev, link_layer, rate_gbps, switch=None, switch_port=None):
        self.host, self.i, self.ibdev, self.netdev, self.ll = host, i, ibdev, netdev, link_layer
        self.bus = NIC_BUSES[i % 8] if i < 8 else 0x60 + i
        self.rate = rate_gbps
        self.rate_now = rate_gbps
        self.switch, self.switch_port = switch, switch_port
        self.state = '4: ACTIVE'
        self.phys = '5: LinkUp'
        self.gen, self.max_gen, self.width, self.max_width = 5 if rate_gbps >= 400 else 4, 5 if rate_gbps >= 400 else 4, 16, 16
        self.ctr = {}
        self.hw = {}
        self.eth = {}
        self.fec_lanes = None
        self.fec_unc = None
        self.pfc_tx = static(0)
        self.carrier = static(2)
        self.busy = 1.0

    def pci_sys(self):
        return '0000:%02x:00.0' % self.bus


class Host:
    def __init__(self, name, rack):
        self.name, self.rack = name, rack
        self.gpus, self.nics = [], []
        self.cpu_some = G(0.4, jit=0.3)
        self.mem_some = G(0.0)
        self.mem_full = G(0.0)
        self.io_some = G(0.1, jit=0.3)
        self.load1 = G(38.0, jit=0.05)
        self.top_extra = []
        self.dmesg = []  # (t, text)
        self.dmesg_style = 'plain'
        self.sel = []
        self.fans = None
        self.detail = 'full'  # full | lite | none
        self.boot = None
        self.cpus = 192
        self.cpu_busy = G(0.22, jit=0.05)


class Port:
    def __init__(self, sw, name):
        self.sw, self.name = sw, name
        self.peer = None  # ('nic', NIC) or ('port', Port)
        self.in_oct = static(0)
        self.out_oct = static(0)
        self.out_disc = static(0)
        self.in_err = static(0)
        self.pfc_tx = static(0)
        self.oper = 'U'
        self.flaps = static(0)


class Switch:
    def __init__(self, name, tier):
        self.name, self.tier = name, tier
        self.ports = {}

    def port(self, name):
        if name not in self.ports:
            self.ports[name] = Port(self, name)
        return self.ports[name]


# ---------------------------------------------------------------------------------------------- output


class Out:
    def __init__(self):
        self.files = {}

    def put(self, path, text, gz=False):
        data = text.encode() if isinstance(text, str) else text
        if gz:
            path += '.gz'
            data = gzip.compress(data, compresslevel=6, mtime=0)
        assert path not in self.files, path
        self.files[path] = data


def fmt_num(v):
    if isinstance(v, float):
        s = '%.6g' % v
        return s
    return str(v)


def om_family(lines, name, typ, help_, series, sample=None):
    """series: list of (labels_str, [(t, v)])"""
    sample = sample or name
    lines.append('# HELP %s %s' % (name, help_))
    lines.append('# TYPE %s %s' % (name, typ))
    for labels, pts in series:
        for (t, v) in pts:
            if v is None:
                continue
            lines.append('%s{%s} %s %d' % (sample, labels, fmt_num(v), t))


def comma(n):
    return '{:,}'.format(int(n))


# ---------------------------------------------------------------------------------------------- case


class Case:
    def __init__(self, cid, rng, root_cause, start, minutes, model='H100', gpn=8, nics_per_host=8,
                 link_layer='InfiniBand', nic_gbps=400):
        self.id, self.rng, self.root_cause = cid, rng, root_cause
        self.component = None
        self.start = ts(start)
        self.end = self.start + minutes * 60
        self.model, self.gpn, self.nph, self.ll, self.nic_gbps = model, gpn, nics_per_host, link_layer, nic_gbps
        self.hosts, self.switches = [], {}
        self.job_hosts = []
        self.title = ''
        self.reported = ''
        self.job_name = 'pretrain'
        self.alerts = []
        self.explicit_ranks = False
        self.rank_order = None
        self.driver = '550.90.07'
        self.dcgm_hostname_label = 'hostname'
        self.dcgm_reason_family = 'DCGM_FI_DEV_CLOCKS_EVENT_REASONS'
        self.smi_reason_title = 'Clocks Event Reasons'
        self.sources = {'topology', 'steps', 'compute', 'logs', 'dcgm', 'node_exporter', 'nodes', 'switch_cmd', 'snmp'}
        self.gz = set()
        self.metric_dt = None
        self.metric_pre = 20 * 60
        # steps model
        self.step_every = None
        self.base_compute = 2.4
        self.base_comm = G(0.55, jit=0.04)
        self.input_wait = G(0.02, jit=0.2)
        self.steps_end = None
        self.first_step = 1000
        self.relaunch = None  # (t_stop, t_resume, rewind_steps)
        self.sdc = None  # (rank, onset)
        self.extra_step_cols = []
        self.logs = {}
        self.nccl_env = []
        self.nccl_hcas = None
        self.nccl_transport = 'NET/IB/{i}/GDRDMA'
        self.nccl_version = '2.21.5+cuda12.4'
        self.p2p = 'P2P/CUMEM/read'
        self.dmesg_style = 'plain'
        self.sw_cmd_before = False
        self.snmp_switches = None
        self.batch_change = None
        self.global_batch = 1024
        self.seq = 4096
        self.uplinks = {}
        self.nvlink_bw_family = False
        self.nic_pci = None
        self.fec_files = None
        self.decoy_hosts = []
        self.collect_cap = 4
        self.bundle_id = cid

    # ---------------------------------------------------------------- fleet construction
    def add_host(self, name, rack, job=True, busy=None, ibdevs=None, netdevs=None):
        h = Host(name, rack)
        h.boot = self.start - self.rng.randrange(3, 40) * 86400 - self.rng.randrange(86400)
        h.dmesg_style = self.dmesg_style
        busy = job if busy is None else busy
        for i in range(self.gpn):
            h.gpus.append(GPU(h, i, self.model, self.rng, busy=busy))
        for i in range(self.nph):
            ib = ibdevs[i] if ibdevs else 'mlx5_%d' % i
            nd = netdevs[i] if netdevs else ('ibp%ds0' % NIC_BUSES[i] if self.ll == 'InfiniBand' else 'eth%d' % (i + 2))
            n = NIC(h, i, ib, nd, self.ll, self.nic_gbps)
            words = (2.1e9 if busy else 2e3) * (1 + 0.04 * (self.rng.random() - 0.5))
            n.ctr['port_xmit_data'] = Ctr(self.rng.randrange(10 ** 13, 10 ** 14), words)
            n.ctr['port_rcv_data'] = Ctr(self.rng.randrange(10 ** 13, 10 ** 14), words * 1.002)
            n.ctr['symbol_error'] = static(0)
            n.ctr['link_downed'] = static(0)
            n.ctr['port_rcv_errors'] = static(0)
            n.ctr['port_xmit_discards'] = static(0)
            if self.ll == 'InfiniBand':
                n.ctr['port_xmit_wait'] = Ctr(self.rng.randrange(10 ** 8, 10 ** 10), (9e4 if busy else 0))
                n.hw['out_of_sequence'] = static(self.rng.randrange(0, 40))
                n.hw['local_ack_timeout_err'] = static(self.rng.randrange(0, 3))
            else:
                n.ctr['port_xmit_wait'] = static(0)
                n.hw['np_cnp_sent'] = Ctr(self.rng.randrange(10 ** 5, 10 ** 7), 30 if busy else 0)
                n.hw['rp_cnp_handled'] = Ctr(self.rng.randrange(10 ** 5, 10 ** 7), 30 if busy else 0)
                n.eth['rx_discards_phy'] = static(0)
                n.eth['rx_out_of_buffer'] = static(0)
                n.eth['tx_pause_storm_warning_events'] = static(0)
                n.eth['tx_pause_storm_error_events'] = static(0)
                n.eth['link_down_events_phy'] = static(1)
                n.eth['rx_symbol_err_phy'] = static(0)
                n.eth['rx_corrected_bits_phy'] = Ctr(self.rng.randrange(10 ** 3, 10 ** 6), 0.5 if busy else 0)
                n.eth['outbound_pci_stalled_wr_events'] = static(0)
                n.fec_lanes = [Ctr(self.rng.randrange(0, 4000), 0.05 if busy else 0) for _ in range(4)]
                n.fec_unc = static(0)
            h.nics.append(n)
        self.hosts.append(h)
        if job:
            self.job_hosts.append(h)
        return h

    def build_fabric(self, leaves, spines, leaf_name, spine_name, host_port, uplink_port, spine_port,
                     uplinks_per_spine=1):
        """Hosts attached round-robin by rack to leaves; each NIC to its leaf port."""
        L = [Switch(leaf_name(i), 'leaf') for i in range(leaves)]
        S = [Switch(spine_name(i), 'spine') for i in range(spines)]
        for s in L + S:
            self.switches[s.name] = s
        per_leaf = {}
        for hi, h in enumerate(self.hosts):
            li = min(hi * leaves // len(self.hosts), leaves - 1)
            leaf = L[li]
            k = per_leaf.get(li, 0)
            for n in h.nics:
                pn = host_port(k)
                k += 1
                p = leaf.port(pn)
                assert p.peer is None, (leaf.name, pn)
                p.peer = ('nic', n)
                n.switch, n.switch_port = leaf.name, pn
            per_leaf[li] = k
        for li, leaf in enumerate(L):
            u = 0
            for si, sp in enumerate(S):
                for j in range(uplinks_per_spine):
                    a = leaf.port(uplink_port(u))
                    b = sp.port(spine_port(li * uplinks_per_spine + j))
                    assert a.peer is None and b.peer is None, (leaf.name, a.name, sp.name, b.name)
                    a.peer, b.peer = ('port', b), ('port', a)
                    u += 1
        self.leaves, self.spines = L, S
        return L, S

    def default_traffic(self):
        """Switch-port octets consistent with NIC data counters (bytes = 4 x words)."""
        for sw in self.switches.values():
            for p in sw.ports.values():
                if p.peer and p.peer[0] == 'nic':
                    n = p.peer[1]
                    p.in_oct = scale_ctr(n.ctr['port_xmit_data'], 4)
                    p.out_oct = scale_ctr(n.ctr['port_rcv_data'], 4)
        for leaf in getattr(self, 'leaves', []):
            ups = [p for p in leaf.ports.values() if p.peer and p.peer[0] == 'port']
            def eff(x):
                return x.r2 if (x.onset is not None and x.onset <= self.start) else x.r1
            down_in = sum(eff(p.in_oct) for p in leaf.ports.values() if p.peer and p.peer[0] == 'nic')
            w = self.uplinks.get(leaf.name)
            outs = []
            for k, p in enumerate(sorted(ups, key=lambda x: x.name)):
                share = (w[k] if w else 1.0 / len(ups))
                outs.append(min(down_in * 0.5 * share, 0.97 * 50e9))
            for k, p in enumerate(sorted(ups, key=lambda x: x.name)):
                p.out_oct = Ctr(self.rng.randrange(10 ** 14, 10 ** 15), outs[k])
                p.in_oct = Ctr(self.rng.randrange(10 ** 14, 10 ** 15), sum(outs) / len(ups))
                q = p.peer[1]
                q.in_oct = Ctr(p.out_oct.b, p.out_oct.r1)
                q.out_oct = Ctr(p.in_oct.b, p.in_oct.r1)

    def all_gpus(self):
        return [g for h in self.hosts for g in h.gpus]

    def ranks(self):
        """list of (rank, host, gpu)"""
        if self.rank_order is not None:
            return self.rank_order
        out = []
        r = 0
        for h in self.job_hosts:
            for g in h.gpus:
                out.append((r, h, g))
                r += 1
        return out

    def nic(self, host, ibdev):
        for n in host.nics:
            if n.ibdev == ibdev:
                return n
        raise KeyError(ibdev)


def scale_ctr(c, k):
    n = Ctr(c.b * k, c.r1 * k, c.r2 * k, c.onset)
    return n
