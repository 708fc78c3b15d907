"""Bundle writers: one function per source, all reading the Case model."""
import json
import time

from engine import (GEN_LSPCI, GEN_SPEED, GEN_SPEED_OLD, MODELS, Ctr, G, Out, comma, h01, iso, om_family)

IB_RATE = {400: '400 Gb/sec (4X NDR)', 200: '200 Gb/sec (4X HDR)', 100: '100 Gb/sec (4X EDR)',
           50: '50 Gb/sec (2X HDR)'}


def sample_times(c):
    t0 = c.start - c.metric_pre
    out = []
    t = t0
    while t <= c.end:
        out.append(t)
        t += c.metric_dt
    if out[-1] != c.end:
        out.append(c.end)
    if c.start not in out:
        out.append(c.start)
        out.sort()
    return out


# ------------------------------------------------------------------------------------------ steps
def steps_rows(c):
    ranks = c.ranks()
    rows = []
    t = c.start - 15 * 60
    step = c.first_step
    stop = c.end if c.steps_end is None else c.steps_end
    lost = [g.lost_at for (_, _, g) in ranks if g.lost_at is not None]
    if lost:
        stop = min(stop, min(lost))
    rl = c.relaunch
    rewound = False
    while t < stop:
        if rl and not rewound and t >= rl[0]:
            t = rl[1]
            step -= rl[2] * c.step_every
            rewound = True
            continue
        comp = {}
        scale = 1.0
        if c.batch_change and t >= c.batch_change[0]:
            scale = c.batch_change[1]
        for (r, h, g) in ranks:
            j = 1 + 0.006 * (2 * h01(c.id, 'c', step, r, t) - 1)
            comp[r] = c.base_compute * scale * j * g.slow.at(t)
        comm = c.base_comm.at(t, 'comm')
        wait = c.input_wait.at(t, 'wait')
        dur = max(comp.values()) + comm + wait
        loss = 2.6 - 0.00005 * step + 0.02 * (h01(c.id, 'loss', step) - 0.5)
        gn = 0.9 + 0.2 * h01(c.id, 'gn', step)
        if c.sdc and t >= c.sdc[1]:
            loss += 0.0
        for (r, h, g) in ranks:
            chk = '%016x' % int(h01(c.id, 'chk', step, r % c.gpn) * (1 << 64))
            if c.sdc and r == c.sdc[0] and t >= c.sdc[1]:
                chk = '%016x' % int(h01(c.id, 'bad', step, r) * (1 << 64))
            rows.append(dict(step=step, rank=r, start=t, dur=dur, comp=comp[r], loss=loss, gn=gn, chk=chk,
                             wait=wait))
        t += dur * c.step_every
        step += c.step_every
    return rows


def write_steps(c, out):
    if 'steps' not in c.sources:
        return None
    rows = steps_rows(c)
    cols = ['step', 'rank', 'start_unix', 'duration_s']
    if 'compute' in c.sources:
        cols.append('compute_s')
    cols += ['loss', 'grad_norm']
    if c.sdc or 'checksum' in c.extra_step_cols:
        cols.append('param_checksum')
    if 'data_wait_s' in c.extra_step_cols:
        cols.append('data_wait_s')
    if 'tokens' in c.extra_step_cols:
        cols.append('tokens')
    lines = [','.join(cols)]
    order = sorted(rows, key=lambda x: (x['start'], x['rank']))
    if 'shuffle_rows' in c.extra_step_cols:
        order = sorted(rows, key=lambda x: h01(c.id, 'ord', x['step'], x['rank'], x['start']))
    for x in order:
        v = [str(x['step']), str(x['rank']), '%.3f' % x['start'], '%.4f' % x['dur']]
        if 'compute' in c.sources:
            v.append('%.4f' % x['comp'])
        v += ['%.5f' % x['loss'], '%.4f' % x['gn']]
        if c.sdc or 'checksum' in c.extra_step_cols:
            v.append(x['chk'])
        if 'data_wait_s' in c.extra_step_cols:
            v.append('%.4f' % x['wait'])
        if 'tokens' in c.extra_step_cols:
            bs = c.global_batch * (c.batch_change[1] if c.batch_change and x['start'] >= c.batch_change[0] else 1)
            v.append(str(int(bs * c.seq / len(c.ranks()))))
        lines.append(','.join(v))
    out.put('job/steps.csv', '\n'.join(lines) + '\n', gz='steps' in c.gz)
    return rows


# ------------------------------------------------------------------------------------------ logs
def glog_time(t):
    return time.strftime('%m%d %H:%M:%S', time.gmtime(t)) + '.%06d' % int((t % 1) * 1e6)


def write_logs(c, out, rows):
    if 'logs' not in c.sources:
        return
    ranks = c.ranks()
    # training log from rank 0
    if rows is not None or True:
        tl = []
        seen = set()
        for x in (rows or []):
            if x['rank'] != 0 or (x['step'], x['start']) in seen:
                continue
            seen.add((x['step'], x['start']))
            bs = c.global_batch * (c.batch_change[1] if c.batch_change and x['start'] >= c.batch_change[0] else 1)
            tps = bs * c.seq / x['dur']
            line = '%s [INFO] train: iteration %d | global_batch %d | step_time %.3fs | tokens/s %.0f | loss %.4f | grad_norm %.3f' % (
                iso(x['start']), x['step'], bs, x['dur'], tps, x['loss'], x['gn'])
            if 'data_time' in c.logs.get('_opts', []):
                line += ' | data_time %.3fs' % x['wait']
            tl.append((x['start'], line))
        for (t, line) in c.logs.get('train', []):
            tl.append((t, line))
        tl.sort(key=lambda z: (z[0], z[1]))
        if tl:
            out.put('job/logs/train.log', '\n'.join(l for _, l in tl) + '\n')
    # NCCL init, one local-rank-0 per host
    if 'nccl_quiet' not in c.logs.get('_opts', []):
        nl = []
        t0 = c.start - 40 * 60
        for hi, h in enumerate(c.job_hosts):
            pid = 4000 + int(h01(c.id, h.name, 'pid') * 90000)
            pre = '%s:%d:%d [0]' % (h.name, pid, pid + 211)
            if hi == 0:
                nl.append((t0, '%s NCCL INFO NCCL version %s' % (pre, c.nccl_version)))
            nl.append((t0 + 1, '%s NCCL INFO Bootstrap : Using bond0:10.%d.%d.%d<0>' % (pre, 40 + hi // 250, hi % 250, 11)))
            for e in c.nccl_env:
                nl.append((t0 + 2, '%s NCCL INFO %s' % (pre, e)))
            hcas = c.nccl_hcas if c.nccl_hcas is not None else [n.ibdev for n in h.nics]
            tag = 'IB' if c.ll == 'InfiniBand' else 'RoCE'
            nl.append((t0 + 2, '%s NCCL INFO NET/IB : Using %s [RO]; OOB bond0:10.%d.%d.%d<0>' % (
                pre, ' '.join('[%d]%s:1/%s' % (i, d, tag) for i, d in enumerate(hcas)), 40 + hi // 250, hi % 250, 11)))
            nl.append((t0 + 3, '%s NCCL INFO Using network IB' % pre))
            nchan = max(1, len(hcas)) * 2
            for ch in range(min(nchan, 4)):
                ni = ch % max(1, len(hcas))
                nl.append((t0 + 4, '%s NCCL INFO Channel %02d/0 : %d[%d] -> %d[%d] [send] via %s' % (
                    pre, ch, hi * c.gpn, 0, ((hi + 1) % len(c.job_hosts)) * c.gpn, 0,
                    c.nccl_transport.format(i=ni))))
            nl.append((t0 + 4, '%s NCCL INFO Channel 00/0 : %d[%d] -> %d[%d] via %s' % (
                pre, hi * c.gpn, 0, hi * c.gpn + 1, 1, c.p2p)))
            nl.append((t0 + 5, '%s NCCL INFO comm 0x55%010x rank %d nranks %d cudaDev 0 nvmlDev 0 busId %x000 commId 0x%016x - Init COMPLETE' % (
                pre, int(h01(c.id, h.name) * 1e10), hi * c.gpn, len(ranks), h.gpus[0].bus, int(h01(c.id) * (1 << 63)))))
        for (t, line) in c.logs.get('nccl', []):
            nl.append((t, line))
        nl.sort(key=lambda z: z[0])
        out.put('job/logs/nccl.log', '\n'.join(l for _, l in nl) + '\n')
    for name, lines in sorted(c.logs.items()):
        if name in ('train', 'nccl', '_opts'):
            continue
        out.put('job/logs/%s.log' % name, '\n'.join(l for _, l in sorted(lines, key=lambda z: z[0])) + '\n')


# ------------------------------------------------------------------------------------------ metrics
def write_dcgm(c, out, hosts=None):
    if 'dcgm' not in c.sources:
        return
    times = sample_times(c)
    hosts = hosts if hosts is not None else c.hosts
    fams = [
        ('DCGM_FI_DEV_SM_CLOCK', 'gauge', 'SM clock frequency (in MHz).', lambda g, t: int(g.sm.at(t, g.uuid))),
        ('DCGM_FI_DEV_GPU_TEMP', 'gauge', 'GPU temperature (in C).', lambda g, t: int(g.temp.at(t, g.uuid + 't'))),
        ('DCGM_FI_DEV_POWER_USAGE', 'gauge', 'Power draw (in W).', lambda g, t: round(g.power.at(t, g.uuid + 'p'), 3)),
        ('DCGM_FI_DEV_GPU_UTIL', 'gauge', 'GPU utilization (in %).', lambda g, t: int(g.util.at(t))),
        ('DCGM_FI_PROF_PIPE_TENSOR_ACTIVE', 'gauge', 'Ratio of cycles the tensor (HMMA) pipe is active.',
         lambda g, t: round(g.tensor.at(t, g.uuid + 'x'), 6)),
        (c.dcgm_reason_family, 'gauge', 'Current clock event reasons (bitmask).', lambda g, t: int(g.reasons.at(t))),
        ('DCGM_FI_DEV_POWER_VIOLATION', 'counter', 'Throttling duration due to power constraints (in us).',
         lambda g, t: g.power_viol.at(t, c.start)),
        ('DCGM_FI_DEV_THERMAL_VIOLATION', 'counter', 'Throttling duration due to thermal constraints (in us).',
         lambda g, t: g.thermal_viol.at(t, c.start)),
        ('DCGM_FI_DEV_XID_ERRORS', 'gauge', 'Value of the last XID error encountered.', lambda g, t: int(g.xid.at(t))),
        ('DCGM_FI_DEV_ECC_SBE_VOL_TOTAL', 'counter', 'Total number of single-bit volatile ECC errors.',
         lambda g, t: g.sbe.at(t, c.start)),
        ('DCGM_FI_DEV_ECC_DBE_VOL_TOTAL', 'counter', 'Total number of double-bit volatile ECC errors.',
         lambda g, t: g.dbe.at(t, c.start)),
        ('DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS', 'counter', 'Number of remapped rows for correctable errors',
         lambda g, t: g.remap['corrected']),
        ('DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL', 'counter', 'Total number of NVLink flow-control CRC errors.',
         lambda g, t: sum(x.at(t, c.start) for x in g.nvl['crc'])),
        ('DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL', 'counter', 'Total number of NVLink retries.',
         lambda g, t: sum(x.at(t, c.start) for x in g.nvl['replay'])),
        ('DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL', 'counter', 'Total number of NVLink recovery errors.',
         lambda g, t: sum(x.at(t, c.start) for x in g.nvl['recovery'])),
        ('DCGM_FI_DEV_PCIE_REPLAY_COUNTER', 'counter', 'Total number of PCIe retries.',
         lambda g, t: g.pcie_replay.at(t, c.start)),
    ]
    if c.nvlink_bw_family:
        fams.append(('DCGM_FI_PROF_NVLINK_TX_BYTES', 'gauge', 'The rate of data transmitted over NVLink, not including protocol headers, in bytes per second.',
                     lambda g, t: int(g.nvlink_bw.at(t, g.uuid + 'n')) if g.nvlink_bw else 0))
    lines = []
    for (name, typ, hlp, fn) in fams:
        series = []
        for h in hosts:
            for g in h.gpus:
                lab = 'gpu="%d",UUID="%s",pci_bus_id="%s",device="nvidia%d",modelName="%s",%s="%s",DCGM_FI_DRIVER_VERSION="%s"' % (
                    g.index, g.uuid, g.pci_nvml(), g.index, g.m['name'], c.dcgm_hostname_label, h.name, c.driver)
                pts = [(t, fn(g, t)) for t in times if not g.lost(t)]
                series.append((lab, pts))
        om_family(lines, name, 'gauge' if typ == 'counter' else typ, hlp, series)
    lines.append('# EOF')
    out.put('metrics/dcgm.om', '\n'.join(lines) + '\n', gz='dcgm' in c.gz)


def integrate(g, times, key, base, scale=1.0):
    tot = base
    out = []
    prev = None
    for t in times:
        if prev is not None:
            tot += g.at(prev, key) * (t - prev) * scale
        out.append((t, round(tot, 3)))
        prev = t
    return out


def write_node_exporter(c, out, hosts=None):
    if 'node_exporter' not in c.sources:
        return
    times = sample_times(c)
    hosts = hosts if hosts is not None else c.hosts
    lines = []
    fams = [('node_infiniband_port_data_received_bytes', 'Number of data octets received on all links', 'port_rcv_data', 4),
            ('node_infiniband_port_data_transmitted_bytes', 'Number of data octets transmitted on all links', 'port_xmit_data', 4),
            ('node_infiniband_port_errors_received', 'Number of errors received on the port', 'port_rcv_errors', 1),
            ('node_infiniband_link_downed', 'Number of times the link failed to recover from an error state and went down', 'link_downed', 1),
            ('node_infiniband_port_transmit_wait', 'Number of ticks during which the port had data to transmit but no data was sent', 'port_xmit_wait', 1)]
    for (name, hlp, key, k) in fams:
        series = []
        for h in hosts:
            for n in h.nics:
                lab = 'device="%s",instance="%s:9100",port="1"' % (n.ibdev, h.name)
                series.append((lab, [(t, n.ctr[key].at(t, c.start) * k) for t in times]))
        om_family(lines, name, 'counter', hlp, series, sample=name + '_total')
    series = []
    for h in hosts:
        series.append(('instance="%s:9100"' % h.name, integrate(h.cpu_some, times, h.name + 'cpu', 1e5 + h01(h.name) * 1e5, 0.01)))
    om_family(lines, 'node_pressure_cpu_waiting_seconds', 'counter',
              'Total time in seconds that processes have waited for CPU time', series,
              sample='node_pressure_cpu_waiting_seconds_total')
    series = []
    for h in hosts:
        series.append(('instance="%s:9100"' % h.name, [(t, round(h.load1.at(t, h.name + 'l'), 2)) for t in times]))
    om_family(lines, 'node_load1', 'gauge', '1m load average.', series)
    lines.append('# EOF')
    out.put('metrics/node.om', '\n'.join(lines) + '\n', gz='node_exporter' in c.gz)


def write_snmp(c, out):
    if 'snmp' not in c.sources or not c.switches:
        return
    times = sample_times(c)
    sws = c.snmp_switches if c.snmp_switches is not None else sorted(c.switches)
    lines = []
    for (name, attr, hlp) in [('ifHCInOctets', 'in_oct', 'The total number of octets received on the interface'),
                              ('ifHCOutOctets', 'out_oct', 'The total number of octets transmitted out of the interface'),
                              ('ifOutDiscards', 'out_disc', 'The number of outbound packets which were chosen to be discarded'),
                              ('ifInErrors', 'in_err', 'For packet-oriented interfaces, the number of inbound packets that contained errors')]:
        series = []
        for sn in sws:
            sw = c.switches[sn]
            for pn in sorted(sw.ports, key=port_key):
                p = sw.ports[pn]
                series.append(('ifName="%s",instance="%s"' % (pn, sn), [(t, getattr(p, attr).at(t, c.start)) for t in times]))
        om_family(lines, name, 'unknown', hlp, series)
    lines.append('# EOF')
    out.put('metrics/snmp-switch.om', '\n'.join(lines) + '\n', gz='snmp' in c.gz)


def port_key(name):
    import re
    return [int(x) if x.isdigit() else x for x in re.split(r'(\d+)', name)]


# ------------------------------------------------------------------------------------------ switches
def pfc_rx(c, p):
    if p.peer is None:
        return Ctr(0)
    kind, obj = p.peer
    return obj.pfc_tx


def write_switch_cmds(c, out):
    if 'switch_cmd' not in c.sources or not c.switches:
        return
    for sn in sorted(c.switches):
        sw = c.switches[sn]
        if getattr(sw, 'no_cmd', False):
            continue
        snaps = [('', c.end)] + ([('before/', c.start)] if c.sw_cmd_before else [])
        for (pre, t) in snaps:
            ports = sorted(sw.ports, key=port_key)
            def table(title, getter):
                hdr = '%11s  %6s  %6s  %6s  %11s  %6s  %6s  %6s  %6s' % (title, 'PFC0', 'PFC1', 'PFC2', 'PFC3', 'PFC4', 'PFC5', 'PFC6', 'PFC7')
                rows = [hdr, '-----------  ------  ------  ------  -----------  ------  ------  ------  ------']
                for pn in ports:
                    v = getter(sw.ports[pn])
                    rows.append('%11s  %6s  %6s  %6s  %11s  %6s  %6s  %6s  %6s' % (pn, '0', '0', '0', comma(v), '0', '0', '0', '0'))
                return rows
            txt = table('Port Rx', lambda p: pfc_rx(c, p).at(t, c.start)) + [''] + table('Port Tx', lambda p: p.pfc_tx.at(t, c.start))
            out.put('switches/%s/%scmd/show-pfc-counters.txt' % (sn, pre), '\n'.join(txt) + '\n')
            # pfcwd
            w = ['      QUEUE       STATUS    STORM DETECTED/RESTORED    TX OK/DROP         RX OK/DROP    TX LAST OK/DROP    RX LAST OK/DROP',
                 '-----------  -----------  -------------------------  ------------  -----------------  -----------------  -----------------']
            for pn in ports:
                p = sw.ports[pn]
                rxp = pfc_rx(c, p)
                det = getattr(p, 'wd_detect', 0) if t == c.end else getattr(p, 'wd_detect_before', 0)
                if det or rxp.at(t, c.start) > 0:
                    stormed = getattr(p, 'wd_stormed', False) and t == c.end
                    drop = getattr(p, 'wd_drop', 0) if t == c.end else 0
                    w.append('%11s  %11s  %25s  %12s  %17s  %17s  %17s' % (
                        pn + ':3', 'stormed' if stormed else 'operational', '%d/%d' % (det, det - (1 if stormed else 0)),
                        '0/%d' % drop, '0/0', '0/%d' % drop, '0/0'))
            out.put('switches/%s/%scmd/show-pfcwd-stats.txt' % (sn, pre), '\n'.join(w) + '\n')
            # interfaces counters
            hd = '      IFACE    STATE            RX_OK       RX_BPS    RX_UTIL    RX_ERR    RX_DRP    RX_OVR            TX_OK       TX_BPS    TX_UTIL    TX_ERR    TX_DRP    TX_OVR'
            rows = [hd, '-----------  -------  ---------------  -----------  ---------  --------  --------  --------  ---------------  -----------  ---------  --------  --------  --------']
            for pn in ports:
                p = sw.ports[pn]
                inr = p.in_oct.r2 if p.in_oct.onset is not None and t > p.in_oct.onset else p.in_oct.r1
                outr = p.out_oct.r2 if p.out_oct.onset is not None and t > p.out_oct.onset else p.out_oct.r1
                sp = (c.nic_gbps if p.peer and p.peer[0] == 'nic' else 400) * 1e9 / 8
                rows.append('%11s  %7s  %15s  %11s  %9s  %8s  %8s  %8s  %15s  %11s  %9s  %8s  %8s  %8s' % (
                    pn, p.oper, comma(p.in_oct.at(t, c.start) // 4096), '%.2f MB/s' % (inr / 1e6), '%.2f%%' % (100 * inr / sp),
                    comma(p.in_err.at(t, c.start)), '0', '0', comma(p.out_oct.at(t, c.start) // 4096), '%.2f MB/s' % (outr / 1e6),
                    '%.2f%%' % (100 * outr / sp), '0', comma(p.out_disc.at(t, c.start)), '0'))
            out.put('switches/%s/%scmd/show-interfaces-counters.txt' % (sn, pre), '\n'.join(rows) + '\n')


# ------------------------------------------------------------------------------------------ nodes
REASON_ROWS = [('Idle', 0x1), ('Applications Clocks Setting', 0x2), ('SW Power Cap', 0x4), ('HW Slowdown', 0x8),
               ('HW Thermal Slowdown', 0x40), ('HW Power Brake Slowdown', 0x80), ('Sync Boost', 0x10),
               ('SW Thermal Slowdown', 0x20), ('Display Clock Setting', 0x100)]


def kv(indent, k, v):
    return '%s%-*s: %s' % (' ' * indent, 38 - indent + 4, k, v)


def smi_q(c, h, t):
    L = ['', '==============NVSMI LOG==============', '',
         kv(0, 'Timestamp', time.strftime('%a %b %d %H:%M:%S %Y', time.gmtime(t))),
         kv(0, 'Driver Version', c.driver), kv(0, 'CUDA Version', '12.4' if c.driver.startswith('55') else '12.2'), '',
         kv(0, 'Attached GPUs', len(h.gpus))]
    for g in h.gpus:
        L.append('GPU %s' % g.pci_nvml())
        if g.lost(t):
            L.append('    Unable to determine the device handle for GPU%s: Unknown Error' % g.pci_nvml())
            continue
        r = int(g.reasons.at(t))
        sbe, dbe = g.sbe.at(t, c.start), g.dbe.at(t, c.start)
        L += [kv(4, 'Product Name', g.m['name']), kv(4, 'Product Architecture', 'Ampere' if g.model == 'A100' else 'Hopper'),
              kv(4, 'Persistence Mode', 'Enabled'), kv(4, 'Serial Number', g.serial), kv(4, 'GPU UUID', g.uuid),
              kv(4, 'Minor Number', g.index), '    PCI', kv(8, 'Bus', '0x%02X' % g.bus), kv(8, 'Bus Id', g.pci_nvml()),
              '        GPU Link Info', '            PCIe Generation', kv(16, 'Max', g.max_gen), kv(16, 'Current', g.gen),
              kv(16, 'Device Current', g.gen), kv(16, 'Device Max', g.max_gen), kv(16, 'Host Max', g.max_gen),
              '            Link Width', kv(16, 'Max', '%dx' % g.max_width), kv(16, 'Current', '%dx' % g.width),
              kv(8, 'Replays Since Reset', g.pcie_replay.at(t, c.start)), kv(8, 'Replay Number Rollovers', 0),
              kv(4, 'Performance State', 'P0' if g.busy else 'P0'), '    ' + c.smi_reason_title]
        for (name, bit) in REASON_ROWS:
            ind = 12 if bit in (0x40, 0x80) else 8
            L.append(kv(ind, name, 'Active' if r & bit else 'Not Active'))
        L += ['    ECC Errors', '        Volatile', kv(12, 'SRAM Correctable', 0), kv(12, 'SRAM Uncorrectable', 0),
              kv(12, 'DRAM Correctable', sbe), kv(12, 'DRAM Uncorrectable', dbe), '        Aggregate',
              kv(12, 'SRAM Correctable', 0), kv(12, 'SRAM Uncorrectable', 0), kv(12, 'DRAM Correctable', sbe + g.sbe_agg_extra),
              kv(12, 'DRAM Uncorrectable', dbe), '    Remapped Rows', kv(8, 'Correctable Error', g.remap['corrected']),
              kv(8, 'Uncorrectable Error', g.remap['uncorrected']), kv(8, 'Pending', 'Yes' if g.remap['pending'] else 'No'),
              kv(8, 'Remapping Failure Occurred', 'Yes' if g.remap['failure'] else 'No'),
              '    Temperature', kv(8, 'GPU Current Temp', '%d C' % int(g.temp.at(t, g.uuid + 't'))),
              kv(8, 'GPU Shutdown Temp', '92 C' if g.model == 'A100' else '92 C'), kv(8, 'GPU Slowdown Temp', '89 C' if g.model == 'A100' else '87 C'),
              '    GPU Power Readings', kv(8, 'Power Draw', '%.2f W' % g.power.at(t, g.uuid + 'p')),
              kv(8, 'Current Power Limit', '%.2f W' % g.plim), kv(8, 'Requested Power Limit', '%.2f W' % g.plim),
              kv(8, 'Default Power Limit', '%.2f W' % g.m['plim']), kv(8, 'Max Power Limit', '%.2f W' % g.m['plim']),
              '    Clocks', kv(8, 'Graphics', '%d MHz' % int(g.sm.at(t, g.uuid))), kv(8, 'SM', '%d MHz' % int(g.sm.at(t, g.uuid))),
              kv(8, 'Memory', '%d MHz' % g.m['mem']), '    Max Clocks', kv(8, 'Graphics', '%d MHz' % g.m['sm']),
              kv(8, 'SM', '%d MHz' % g.m['sm']), kv(8, 'Memory', '%d MHz' % g.m['mem']), '']
    return '\n'.join(L) + '\n'


def nvml_json(c, h, t):
    devs = []
    for g in h.gpus:
        if g.lost(t):
            devs.append({'index': g.index, 'pci_bus_id': g.pci_nvml(), 'error': 'GPU is lost'})
            continue
        sbe, dbe = g.sbe.at(t, c.start), g.dbe.at(t, c.start)
        devs.append({
            'index': g.index, 'uuid': g.uuid, 'pci_bus_id': g.pci_nvml(), 'name': g.m['name'],
            'nvmlDeviceGetCurrPcieLinkGeneration': g.gen, 'nvmlDeviceGetMaxPcieLinkGeneration': g.max_gen,
            'nvmlDeviceGetCurrPcieLinkWidth': g.width, 'nvmlDeviceGetMaxPcieLinkWidth': g.max_width,
            'nvmlDeviceGetPcieReplayCounter': g.pcie_replay.at(t, c.start),
            'nvmlDeviceGetTemperature': int(g.temp.at(t, g.uuid + 't')),
            'nvmlDeviceGetPowerUsage': int(g.power.at(t, g.uuid + 'p') * 1000),
            'nvmlDeviceGetEnforcedPowerLimit': g.plim * 1000,
            'nvmlDeviceGetClockInfo': {'sm': int(g.sm.at(t, g.uuid)), 'mem': g.m['mem']},
            'nvmlDeviceGetMaxClockInfo': {'sm': g.m['sm'], 'mem': g.m['mem']},
            'nvmlDeviceGetCurrentClocksEventReasons': int(g.reasons.at(t)),
            'nvmlDeviceGetTotalEccErrors': {'corrected_volatile': sbe, 'uncorrected_volatile': dbe},
            'nvmlDeviceGetRemappedRows': dict(g.remap)})
    ev = [e for e in getattr(h, 'nvml_events', []) if e['_t'] <= t]
    return json.dumps({'driver_version': c.driver, 'devices': devs,
                       'events': [{k: v for k, v in e.items() if k != '_t'} for e in ev]}, indent=1, sort_keys=True) + '\n'


def dmesg_text(c, h):
    lines = list(h.dmesg)
    base = [(h.boot + 1.2, 'Linux version 5.15.0-119-generic (buildd@lcy02-amd64-080) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0) #129-Ubuntu SMP'),
            (h.boot + 9.8, 'nvidia: loading out-of-tree module taints kernel.'),
            (h.boot + 11.4, 'NVRM: loading NVIDIA UNIX x86_64 Kernel Module  %s' % c.driver)]
    for n in h.nics:
        base.append((h.boot + 14 + n.i * 0.01, 'mlx5_core %s %s: Port: 1 Link ACTIVE' % (n.pci_sys(), n.ibdev)))
    lines = base + lines
    lines.sort(key=lambda z: z[0])
    out = []
    seq = 1000
    for (t, txt) in lines:
        if t > c.end or t < h.boot:
            continue
        up = t - h.boot
        seq += 1
        st = h.dmesg_style
        if st == 'plain':
            out.append('[%12.6f] %s' % (up, txt))
        elif st == 'T':
            out.append('[%s] %s' % (time.strftime('%a %b %d %H:%M:%S %Y', time.gmtime(t)), txt))
        elif st == 'journal':
            out.append('%s %s kernel: %s' % (time.strftime('%b %d %H:%M:%S', time.gmtime(t)).replace(' 0', '  ', 1) if time.gmtime(t).tm_mday < 10 else time.strftime('%b %d %H:%M:%S', time.gmtime(t)), h.name, txt))
        elif st == 'kmsg':
            pr = 3 if ('Xid' in txt or 'error' in txt.lower()) else 6
            out.append('%d,%d,%d,-;%s' % (pr, seq, int(up * 1e6), txt))
    return '\n'.join(out) + '\n'


def lspci_text(c, h):
    L = []
    for g in h.gpus:
        dev = '%02x:00.0' % g.bus
        if g.lost(c.end):
            L += ['%s 3D controller: NVIDIA Corporation Device %s (rev ff) (prog-if ff)' % (dev, g.m['dev']),
                  '\t!!! Unknown header type 7f', '']
            continue
        ok_s = '(ok)' if g.gen == g.max_gen else '(downgraded)'
        ok_w = '(ok)' if g.width == g.max_width else '(downgraded)'
        L += ['%s 3D controller: NVIDIA Corporation Device %s (rev a1)' % (dev, g.m['dev']),
              '\tSubsystem: NVIDIA Corporation Device 16c1',
              '\tCapabilities: [60] Express (v2) Endpoint, MSI 00',
              '\t\tLnkCap:\tPort #0, Speed %s, Width x%d, ASPM L1, Exit Latency L1 <4us' % (GEN_LSPCI[g.max_gen], g.max_width),
              '\t\tLnkSta:\tSpeed %s %s, Width x%d %s' % (GEN_LSPCI[g.gen], ok_s, g.width, ok_w),
              '\t\t\tTrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-',
              '\tKernel driver in use: nvidia', '']
    for n in h.nics:
        ok_s = '(ok)' if n.gen == n.max_gen else '(downgraded)'
        ok_w = '(ok)' if n.width == n.max_width else '(downgraded)'
        L += ['%02x:00.0 %s controller: Mellanox Technologies MT2910 Family [ConnectX-7]' % (
                  n.bus, 'Infiniband' if n.ll == 'InfiniBand' else 'Ethernet'),
              '\tSubsystem: Mellanox Technologies Device 0051',
              '\tCapabilities: [60] Express (v2) Endpoint, MSI 00',
              '\t\tLnkCap:\tPort #0, Speed %s, Width x%d, ASPM not supported' % (GEN_LSPCI[n.max_gen], n.max_width),
              '\t\tLnkSta:\tSpeed %s %s, Width x%d %s' % (GEN_LSPCI[n.gen], ok_s, n.width, ok_w),
              '\tKernel driver in use: mlx5_core', '']
    return '\n'.join(L)


def aer_text(g):
    names = ['Receiver Error', 'Bad TLP', 'Bad DLLP', 'RELAY_NUM Rollover', 'Replay Timer Timeout', 'Advisory Non-Fatal',
             'Corrected Internal Error', 'Header Log Overflow']
    tot = sum(g.aer.get(n, 0) for n in names)
    return '\n'.join('%s %d' % (n, g.aer.get(n, 0)) for n in names) + '\nTOTAL_ERR_COR %d\n' % tot


def nvlink_e(c, h, t):
    L = []
    for g in h.gpus:
        if g.lost(t):
            continue
        L.append('GPU %d: %s (UUID: %s)' % (g.index, g.m['name'], g.uuid))
        for li in range(len(g.nvl['crc'])):
            L.append('\t Link %d: Replay Errors: %d' % (li, g.nvl['replay'][li].at(t, c.start)))
            L.append('\t Link %d: Recovery Errors: %d' % (li, g.nvl['recovery'][li].at(t, c.start)))
            L.append('\t Link %d: CRC Errors: %d' % (li, g.nvl['crc'][li].at(t, c.start)))
    return '\n'.join(L) + '\n'


def ethtool_s(c, n, t):
    L = ['NIC statistics:']
    rx_p = pfc_rx_of_nic(c, n)
    vals = {'rx_bytes_phy': n.ctr['port_rcv_data'].at(t, c.start) * 4,
            'tx_bytes_phy': n.ctr['port_xmit_data'].at(t, c.start) * 4,
            'rx_prio3_pause': rx_p.at(t, c.start), 'rx_prio3_pause_duration': rx_p.at(t, c.start) * 41,
            'tx_prio3_pause': n.pfc_tx.at(t, c.start), 'tx_prio3_pause_duration': n.pfc_tx.at(t, c.start) * 41}
    for k, v in n.eth.items():
        vals[k] = v.at(t, c.start)
    for k in sorted(vals):
        L.append('     %s: %d' % (k, vals[k]))
    return '\n'.join(L) + '\n'


def pfc_rx_of_nic(c, n):
    if n.switch and n.switch in c.switches:
        return c.switches[n.switch].port(n.switch_port).pfc_tx
    return Ctr(0)


def fec_text(c, n, t):
    L = ['FEC parameters for %s:' % n.netdev, 'Supported/Configured FEC encodings: Auto RS',
         'Active FEC encoding: RS', 'Statistics:']
    lanes = [x.at(t, c.start) for x in n.fec_lanes]
    L.append('  corrected_blocks: %d' % sum(lanes))
    for i, v in enumerate(lanes):
        L.append('    Lane %d: %d' % (i, v))
    L.append('  uncorrectable_blocks: %d' % n.fec_unc.at(t, c.start))
    return '\n'.join(L) + '\n'


def ibstat(c, h):
    L = []
    for n in h.nics:
        L += ["CA '%s'" % n.ibdev, '\tCA type: MT4129', '\tNumber of ports: 1', '\tFirmware version: 28.39.2048',
              '\tHardware version: 0', '\tNode GUID: 0x%016x' % int(h01(h.name, n.ibdev) * (1 << 62)),
              '\tPort 1:', '\t\tState: %s' % ('Active' if 'ACTIVE' in n.state else 'Down'),
              '\t\tPhysical state: %s' % n.phys.split(': ')[1], '\t\tRate: %d' % n.rate_now,
              '\t\tLink layer: %s' % n.ll]
    return '\n'.join(L) + '\n'


def top_text(c, h):
    t = c.end
    cpu = h.cpu_busy.at(t, h.name + 'cb')
    L = ['top - %s up %d days,  2 users,  load average: %.2f, %.2f, %.2f' % (
             time.strftime('%H:%M:%S', time.gmtime(t)), (t - h.boot) // 86400, h.load1.at(t, h.name + 'l'),
             h.load1.at(t - 300, h.name + 'l'), h.load1.at(t - 900, h.name + 'l')),
         'Tasks: 1021 total,   %d running, 1013 sleeping,   0 stopped,   0 zombie' % (8 + len(h.top_extra)),
         '%%Cpu(s): %4.1f us,  %3.1f sy,  0.0 ni, %4.1f id,  %3.1f wa,  0.0 hi,  0.1 si,  0.0 st' % (
             cpu * 80, cpu * 15, 100 - cpu * 95 - 0.3, 0.3),
         'MiB Mem : 2063891.2 total, 1221840.4 free, 402117.6 used, 439933.2 buff/cache', '',
         '    PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND']
    procs = list(h.top_extra)
    for i in range(8 if h in c.job_hosts else 0):
        procs.append((311200 + i, 'train', '20', '0', '142.3g', '31.2g', '2.1g', 'R', 101.0 + i * 0.7, 1.5, '812:11.%02d' % i, 'python3'))
    procs.sort(key=lambda p: -p[8])
    for p in procs:
        L.append('%7d %-8s  %2s  %2s %7s %6s %6s %s %5.1f %5.1f %9s %s' % p)
    return '\n'.join(L) + '\n'


def psi(g_some, g_full, t, key, has_full=True):
    s = g_some.at(t, key + 's')
    f = g_full.at(t, key + 'f') if g_full else 0.0
    tot = int(h01(key) * 1e9)
    L = ['some avg10=%.2f avg60=%.2f avg300=%.2f total=%d' % (s, s * 0.93, s * 0.71, tot + int(s * 1e7))]
    if has_full:
        L.append('full avg10=%.2f avg60=%.2f avg300=%.2f total=%d' % (f, f * 0.93, f * 0.71, int(f * 1e7)))
    return '\n'.join(L) + '\n'


def write_nodes(c, out):
    if 'nodes' not in c.sources:
        return
    for h in c.hosts:
        if h.detail == 'none':
            continue
        base = 'nodes/%s/' % h.name
        gzc = 'nodes_cmd' in c.gz
        out.put(base + 'collected.json', json.dumps({'before': c.start, 'now': c.end, 'boot': h.boot}, sort_keys=True) + '\n')
        out.put(base + 'nvml.json', nvml_json(c, h, c.end))
        snaps = [('', c.end), ('before/', c.start)]
        if h.detail == 'lite':
            for pre, t in snaps:
                if 'lite_nvlink' in c.gz or c.ll != 'Ethernet':
                    out.put(base + pre + 'cmd/nvidia-smi-nvlink-e.txt', nvlink_e(c, h, t), gz=gzc)
                if c.ll == 'Ethernet':
                    for n in h.nics:
                        out.put(base + pre + 'cmd/ethtool-I-show-fec-%s.txt' % n.netdev, fec_text(c, n, t), gz=gzc)
            continue
        for pre, t in snaps:
            for g in h.gpus:
                d = base + pre + 'sys/bus/pci/devices/%s/' % g.pci_sys()
                if pre:
                    continue
                if g.lost(t):
                    out.put(d + 'current_link_speed', 'Unknown\n')
                    out.put(d + 'current_link_width', '63\n')
                    out.put(d + 'max_link_speed', 'Unknown\n')
                    out.put(d + 'max_link_width', '63\n')
                else:
                    sp = GEN_SPEED_OLD if getattr(c, 'old_kernel', False) else GEN_SPEED
                    out.put(d + 'current_link_speed', sp[g.gen] + '\n')
                    out.put(d + 'current_link_width', '%d\n' % g.width)
                    out.put(d + 'max_link_speed', sp[g.max_gen] + '\n')
                    out.put(d + 'max_link_width', '%d\n' % g.max_width)
                out.put(d + 'aer_dev_correctable', aer_text(g))
            for n in h.nics:
                d = base + pre + 'sys/class/infiniband/%s/ports/1/' % n.ibdev
                if pre == '':
                    out.put(d + 'state', n.state + '\n')
                    out.put(d + 'phys_state', n.phys + '\n')
                    out.put(d + 'rate', IB_RATE.get(n.rate_now, '%d Gb/sec (4X)' % n.rate_now) + '\n')
                    out.put(d + 'link_layer', n.ll + '\n')
                if n.ll == 'Ethernet':
                    out.put(base + pre + 'sys/class/net/%s/carrier_changes' % n.netdev, '%d\n' % n.carrier.at(t, c.start))
                for k in sorted(n.ctr):
                    if k == 'port_xmit_wait' and n.ll == 'Ethernet':
                        continue
                    out.put(d + 'counters/' + k, '%d\n' % n.ctr[k].at(t, c.start))
                for k in sorted(n.hw):
                    out.put(d + 'hw_counters/' + k, '%d\n' % n.hw[k].at(t, c.start))
                if pre == '' and c.nic_pci:
                    pd = base + 'sys/bus/pci/devices/%s/' % n.pci_sys()
                    out.put(pd + 'current_link_speed', GEN_SPEED[n.gen] + '\n')
                    out.put(pd + 'current_link_width', '%d\n' % n.width)
                    out.put(pd + 'max_link_speed', GEN_SPEED[n.max_gen] + '\n')
                    out.put(pd + 'max_link_width', '%d\n' % n.max_width)
            out.put(base + pre + 'cmd/nvidia-smi-q.txt', smi_q(c, h, t), gz=gzc)
            if c.model != 'A100' or True:
                out.put(base + pre + 'cmd/nvidia-smi-nvlink-e.txt', nvlink_e(c, h, t), gz=gzc)
            if c.ll == 'Ethernet':
                for n in h.nics:
                    out.put(base + pre + 'cmd/ethtool-S-%s.txt' % n.netdev, ethtool_s(c, n, t), gz=gzc)
                    if c.fec_files:
                        out.put(base + pre + 'cmd/ethtool-I-show-fec-%s.txt' % n.netdev, fec_text(c, n, t), gz=gzc)
        cmd = base + 'cmd/'
        out.put(cmd + 'lspci-vv.txt', lspci_text(c, h), gz=gzc)
        out.put(cmd + 'dmesg.txt', dmesg_text(c, h), gz=gzc)
        out.put(cmd + 'ibstat.txt', ibstat(c, h), gz=gzc)
        out.put(cmd + 'top.txt', top_text(c, h), gz=gzc)
        out.put(cmd + 'pressure-cpu.txt', psi(h.cpu_some, None, c.end, h.name + 'cpu', has_full=True))
        out.put(cmd + 'pressure-memory.txt', psi(h.mem_some, h.mem_full, c.end, h.name + 'mem'))
        out.put(cmd + 'pressure-io.txt', psi(h.io_some, G(0.0), c.end, h.name + 'io'))
        if h.sel:
            out.put(cmd + 'ipmitool-sel-elist.txt', '\n'.join(
                '%4x | %s | %s | %s | %s | %s' % (i + 1, time.strftime('%m/%d/%Y', time.gmtime(t)),
                                                   time.strftime('%H:%M:%S', time.gmtime(t)), s, e, a)
                for i, (t, s, e, a) in enumerate(sorted(h.sel))) + '\n')
        if h.fans:
            out.put(cmd + 'ipmitool-sdr-type-fan.txt', '\n'.join(
                '%-16s | %02Xh | %-3s | 29.%d | %s' % (nm, 0x30 + i, st, i + 1, rd) for i, (nm, rd, st) in enumerate(h.fans)) + '\n')


# ------------------------------------------------------------------------------------------ top level
def auto_settings(c):
    if c.nic_pci is None:
        c.nic_pci = h01(c.id, 'nicpci') < 0.5
    if c.fec_files is None:
        c.fec_files = h01(c.id, 'fec') < 0.4
    ngpu = sum(len(h.gpus) for h in c.hosts)
    if c.metric_dt is None:
        c.metric_dt = 120 if ngpu <= 64 else (300 if ngpu <= 512 else 600)
    if ngpu > 64 or h01(c.id, 'gzm') < 0.6:
        c.gz |= {'dcgm', 'node_exporter', 'snmp'}
    elif c.metric_dt < 300:
        c.metric_dt = 300
    if c.step_every is None:
        est = c.base_compute + c.base_comm.normal * 1.5
        c.step_every = max(1, int((c.end - c.start + 900) / (est * 70)))
    if len(c.ranks()) > 256:
        c.gz.add('steps')


def write_bundle(c, out):
    auto_settings(c)
    inc = {'schema': 'forensic.bundle/v1', 'id': c.bundle_id, 'title': c.title,
           'window': {'start': iso(c.start), 'end': iso(c.end)},
           'job': {'name': c.job_name, 'ranks': len(c.ranks()), 'gpus_per_node': c.gpn},
           'reported': c.reported}
    if c.alerts:
        inc['alerts'] = c.alerts
    out.put('incident.json', json.dumps(inc, indent=2, sort_keys=True) + '\n')
    if 'topology' in c.sources:
        topo = {'hosts': []}
        for h in c.hosts:
            hd = {'name': h.name, 'rack': h.rack,
                  'gpus': [{'index': g.index, 'pci_bus_id': g.pci_nvml(), 'uuid': g.uuid} for g in h.gpus],
                  'nics': []}
            for n in h.nics:
                nd = {'ibdev': n.ibdev, 'netdev': n.netdev, 'pci_bus_id': n.pci_sys(), 'port': 1, 'link_layer': n.ll}
                if n.switch and 'nic_switch' not in getattr(c, 'topo_omit', ()):
                    nd['switch'], nd['switch_port'] = n.switch, n.switch_port
                hd['nics'].append(nd)
            topo['hosts'].append(hd)
        if c.explicit_ranks:
            topo['ranks'] = [{'rank': r, 'host': h.name, 'gpu': g.index} for (r, h, g) in c.ranks()]
        if c.switches:
            topo['switches'] = []
            for sn in sorted(c.switches):
                sw = c.switches[sn]
                links = []
                for pn in sorted(sw.ports, key=port_key):
                    p = sw.ports[pn]
                    if p.peer and p.peer[0] == 'port':
                        links.append({'port': pn, 'peer': p.peer[1].sw.name, 'peer_port': p.peer[1].name})
                topo['switches'].append({'name': sn, 'tier': sw.tier, 'links': links})
        out.put('topology.json', json.dumps(topo, indent=1, sort_keys=True) + '\n')
    rows = write_steps(c, out)
    write_logs(c, out, rows)
    write_dcgm(c, out, getattr(c, 'dcgm_hosts', None))
    write_node_exporter(c, out, getattr(c, 'ne_hosts', None))
    write_snmp(c, out)
    write_switch_cmds(c, out)
    write_nodes(c, out)
