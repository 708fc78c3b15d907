#!/usr/bin/env python3
"""Validate a directory written by write_incidents.py (stdlib only).

Checks, per case: every file parses in its format; gzip members are deterministic (no name, mtime 0);
counters never decrease (OpenMetrics series, sysfs before/now, command outputs before/now);
the same counter read in two sources agrees; the truth's component exists in the bundle;
steps.csv physics hold (per step every rank has the same duration, duration >= the slowest rank's
compute + the input wait). And for the set: 32+ cases, every root cause twice, 4+ healthy, one case
of >= 256 hosts.  Usage: python3 validate.py DIR
"""
import csv
import gzip
import io
import json
import os
import re
import sys
from collections import defaultdict

CAUSES = ['pcie_downtrain', 'pfc_pause_storm', 'ecmp_hash_polarization', 'link_degradation', 'thermal_throttle',
          'power_throttle', 'hbm_degradation', 'gpu_fell_off_bus', 'nvlink_fault', 'silent_data_corruption',
          'host_contention', 'input_pipeline_stall', 'nccl_misconfiguration', 'healthy']
COUNTER_FAMILIES = {
    'DCGM_FI_DEV_POWER_VIOLATION', 'DCGM_FI_DEV_THERMAL_VIOLATION', 'DCGM_FI_DEV_ECC_SBE_VOL_TOTAL',
    'DCGM_FI_DEV_ECC_DBE_VOL_TOTAL', 'DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL',
    'DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL', 'DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL',
    'DCGM_FI_DEV_PCIE_REPLAY_COUNTER', 'DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS', 'ifHCInOctets', 'ifHCOutOctets',
    'ifOutDiscards', 'ifInErrors'}
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\} (\S+) (\d+(?:\.\d+)?)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
DMESG = [re.compile(r'^\[\s*\d+\.\d{6}\] '), re.compile(r'^\[\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}\] '),
         re.compile(r'^\w{3} [ \d]\d \d\d:\d\d:\d\d \S+ kernel: '), re.compile(r'^\d+,\d+,\d+,[-c];')]
HOSTNAME = re.compile(r'^[A-Za-z0-9.\-]{1,110}$')


class Errors:
    def __init__(self):
        self.items = []

    def add(self, case, msg):
        self.items.append('%s: %s' % (case, msg))


def read(path, err, case):
    with open(path, 'rb') as f:
        data = f.read()
    if path.endswith('.gz'):
        if len(data) < 10 or data[:3] != b'\x1f\x8b\x08':
            err.add(case, 'bad gzip magic %s' % path)
            return b''
        if data[3] & 0x08:
            err.add(case, 'gzip member carries a file name: %s' % path)
        if data[4:8] != b'\x00\x00\x00\x00':
            err.add(case, 'gzip mtime not 0: %s' % path)
        try:
            data = gzip.decompress(data)
        except Exception as e:  # noqa: BLE001
            err.add(case, 'gzip does not decompress %s: %s' % (path, e))
            return b''
    return data


def strip_gz(rel):
    return rel[:-3] if rel.endswith('.gz') else rel


def parse_om(text, err, case, rel):
    series = defaultdict(list)
    lines = text.split('\n')
    if lines and lines[-1] == '':
        lines = lines[:-1]
    if not lines or lines[-1] != '# EOF':
        err.add(case, '%s: no # EOF at end' % rel)
    for ln in lines:
        if ln.startswith('#'):
            if not (ln.startswith('# HELP ') or ln.startswith('# TYPE ') or ln == '# EOF'):
                err.add(case, '%s: bad comment %r' % (rel, ln[:80]))
            continue
        m = SAMPLE.match(ln)
        if not m:
            err.add(case, '%s: unparsable sample %r' % (rel, ln[:100]))
            continue
        name, labels, v, t = m.groups()
        try:
            v = float(v)
        except ValueError:
            err.add(case, '%s: bad value %r' % (rel, ln[:100]))
            continue
        lab = tuple(sorted(LABEL.findall(labels)))
        series[(name, lab)].append((float(t), v))
    for (name, lab), pts in series.items():
        ts = [p[0] for p in pts]
        if ts != sorted(ts) or len(set(ts)) != len(ts):
            err.add(case, '%s: timestamps not increasing in %s%s' % (rel, name, dict(lab)))
        if name.endswith('_total') or name in COUNTER_FAMILIES:
            vs = [p[1] for p in pts]
            if any(b < a for a, b in zip(vs, vs[1:])):
                err.add(case, '%s: counter decreases: %s %s' % (rel, name, dict(lab)))
    return series


def kv_counters(text):
    """name: value lines (ethtool -S, fec) and 'Link n: X Errors: v' lines."""
    out = {}
    cur_gpu = None
    for ln in text.split('\n'):
        m = re.match(r'^GPU (\d+): ', ln)
        if m:
            cur_gpu = m.group(1)
            continue
        m = re.match(r'^\s+Link (\d+): ([A-Za-z ]+): (\d+)$', ln)
        if m:
            out['gpu%s/link%s/%s' % (cur_gpu, m.group(1), m.group(2))] = int(m.group(3))
            continue
        m = re.match(r'^\s*([A-Za-z0-9_ ]+): (\d+)$', ln)
        if m:
            out.setdefault(m.group(1).strip(), 0)
            out[m.group(1).strip()] = int(m.group(2)) if m.group(1).strip() not in out or True else 0
    return out


def smi_ecc(text):
    """{bus id: volatile DRAM correctable} from nvidia-smi -q."""
    out = {}
    cur = None
    in_vol = False
    for ln in text.split('\n'):
        m = re.match(r'^GPU ([0-9A-F]{8}:[0-9A-F]{2}:[0-9A-F]{2}\.\d)$', ln)
        if m:
            cur = m.group(1)
            continue
        if ln.strip() == 'Volatile':
            in_vol = True
        elif ln.strip() == 'Aggregate':
            in_vol = False
        m = re.match(r'^\s+DRAM Correctable\s+: (\d+)$', ln)
        if m and in_vol and cur:
            out[cur] = int(m.group(1))
    return out


def check_steps(case, text, inc, err):
    rd = csv.reader(io.StringIO(text))
    hdr = next(rd)
    if hdr[:4] != ['step', 'rank', 'start_unix', 'duration_s']:
        err.add(case, 'steps.csv header %s' % hdr)
        return
    ix = {k: i for i, k in enumerate(hdr)}
    groups = defaultdict(list)
    nranks = inc['job']['ranks']
    for row in rd:
        if len(row) != len(hdr):
            err.add(case, 'steps.csv ragged row %s' % row)
            continue
        r = int(row[1])
        if r < 0 or r >= nranks:
            err.add(case, 'steps.csv rank %d outside job' % r)
        groups[(row[0], row[2])].append(row)
    for key, rows in groups.items():
        durs = set(x[3] for x in rows)
        if len(durs) != 1:
            err.add(case, 'step %s: durations differ across ranks %s' % (key, sorted(durs)[:3]))
            continue
        d = float(rows[0][3])
        comp = max(float(x[ix['compute_s']]) for x in rows) if 'compute_s' in ix else 0.0
        wait = float(rows[0][ix['data_wait_s']]) if 'data_wait_s' in ix else 0.0
        if 'data_wait_s' in ix and len(set(x[ix['data_wait_s']] for x in rows)) != 1:
            err.add(case, 'step %s: input wait differs across ranks' % (key,))
        if d + 1e-3 < comp + wait:
            err.add(case, 'step %s: duration %.4f < max compute %.4f + input wait %.4f' % (key, d, comp, wait))
        if len(set(x[1] for x in rows)) != len(rows):
            err.add(case, 'step %s: duplicate rank rows' % (key,))
    if len(groups) < 10:
        err.add(case, 'steps.csv has only %d steps' % len(groups))


def validate_case(root, case, err):
    cdir = os.path.join(root, case)
    bdir = os.path.join(cdir, 'bundle')
    try:
        truth = json.load(open(os.path.join(cdir, 'truth.json')))
    except Exception as e:  # noqa: BLE001
        err.add(case, 'truth.json: %s' % e)
        return None
    if set(truth) != {'root_cause', 'component'} or truth['root_cause'] not in CAUSES:
        err.add(case, 'truth.json malformed %s' % truth)
    if (truth['root_cause'] == 'healthy') != (truth['component'] is None):
        err.add(case, 'healthy iff component null')
    files = {}
    for dp, dn, fn in os.walk(bdir):
        for f in fn:
            p = os.path.join(dp, f)
            files[os.path.relpath(p, bdir)] = p
    if 'incident.json' not in files:
        err.add(case, 'no incident.json')
        return truth
    inc = json.loads(read(files['incident.json'], err, case))
    if inc.get('schema') != 'forensic.bundle/v1' or 'window' not in inc or 'job' not in inc:
        err.add(case, 'incident.json fields')
    for k in ('start', 'end'):
        if not re.match(r'^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$', inc['window'][k]):
            err.add(case, 'window %s not ISO Z' % k)
    text = {}
    for rel, p in sorted(files.items()):
        data = read(p, err, case)
        try:
            text[strip_gz(rel)] = data.decode('utf-8')
        except UnicodeDecodeError:
            err.add(case, 'not utf-8: %s' % rel)
    topo = json.loads(text['topology.json']) if 'topology.json' in text else {}
    hosts = {h['name']: h for h in topo.get('hosts', [])}
    for h in hosts:
        if not HOSTNAME.match(h):
            err.add(case, 'host name %r' % h)
    if topo.get('ranks'):
        seen = set()
        for r in topo['ranks']:
            if r['host'] not in hosts:
                err.add(case, 'rank on unknown host %s' % r['host'])
            seen.add(r['rank'])
        if seen != set(range(inc['job']['ranks'])):
            err.add(case, 'topology ranks do not cover job.ranks')
    # json files
    for rel in text:
        if rel.endswith('.json'):
            try:
                json.loads(text[rel])
            except ValueError as e:
                err.add(case, '%s: %s' % (rel, e))
    # metrics
    om = {}
    for rel in text:
        if rel.startswith('metrics/') and rel.endswith('.om'):
            om[rel] = parse_om(text[rel], err, case, rel)
    # node before/now monotonic
    node_hosts = set()
    for rel in text:
        m = re.match(r'^nodes/([^/]+)/before/(.*)$', rel)
        if rel.startswith('nodes/'):
            node_hosts.add(rel.split('/')[1])
        if not m:
            continue
        now_rel = 'nodes/%s/%s' % (m.group(1), m.group(2))
        if now_rel not in text:
            continue
        b, n = text[rel], text[now_rel]
        if '/counters/' in rel or '/hw_counters/' in rel or rel.endswith('carrier_changes'):
            if int(n) < int(b):
                err.add(case, 'counter decreased %s' % now_rel)
        elif '/cmd/ethtool' in rel or 'nvlink-e' in rel:
            kb, kn = kv_counters(b), kv_counters(n)
            for k, v in kb.items():
                if k in kn and kn[k] < v:
                    err.add(case, '%s: %s decreased' % (now_rel, k))
        elif rel.endswith('nvidia-smi-q.txt'):
            eb, en = smi_ecc(b), smi_ecc(n)
            for k, v in eb.items():
                if k in en and en[k] < v:
                    err.add(case, '%s: ECC decreased on %s' % (now_rel, k))
    for rel in text:
        if rel.endswith('cmd/dmesg.txt'):
            for ln in text[rel].split('\n'):
                if ln and not any(p.match(ln) for p in DMESG):
                    err.add(case, '%s: unparsable line %r' % (rel, ln[:80]))
                    break
        if re.search(r'cmd/ethtool-S-[^/]+\.txt$', rel) and not text[rel].startswith('NIC statistics:\n'):
            err.add(case, '%s: no NIC statistics header' % rel)
        if rel.endswith('cmd/lspci-vv.txt'):
            for ln in text[rel].split('\n'):
                if 'LnkSta:' in ln and not re.match(r'^\t\tLnkSta:\tSpeed [\d.]+GT/s \((ok|downgraded)\), Width x\d+ \((ok|downgraded)\)$', ln):
                    err.add(case, '%s: LnkSta %r' % (rel, ln))
        if rel.endswith('nvml.json'):
            for dv in json.loads(text[rel]).get('devices', []):
                if 'index' not in dv or ('error' not in dv and 'nvmlDeviceGetClockInfo' not in dv):
                    err.add(case, '%s: device without readings or error' % rel)
        if re.search(r'/sys/bus/pci/devices/[^/]+/current_link_speed$', rel):
            v = text[rel].strip()
            if not (v == 'Unknown' or re.match(r'^\d+(\.\d)? GT/s( PCIe)?$', v)):
                err.add(case, '%s: %r' % (rel, v))
    # cross-source agreement
    end = None
    for rel in text:
        if rel.endswith('collected.json'):
            end = json.loads(text[rel]).get('now')
            break
    if end is not None:
        for rel, series in om.items():
            for (name, lab), pts in series.items():
                d = dict(lab)
                last = [v for (t, v) in pts if t == end]
                if not last:
                    continue
                host = d.get('hostname') or d.get('Hostname') or d.get('instance', '').split(':')[0]
                if name == 'node_infiniband_port_data_transmitted_bytes_total':
                    f = 'nodes/%s/sys/class/infiniband/%s/ports/1/counters/port_xmit_data' % (host, d['device'])
                    if f in text and int(text[f]) * 4 != int(last[0]):
                        err.add(case, 'node_exporter vs sysfs disagree %s' % f)
                if name == 'DCGM_FI_DEV_ECC_SBE_VOL_TOTAL':
                    f = 'nodes/%s/nvml.json' % host
                    if f in text:
                        for dv in json.loads(text[f])['devices']:
                            if dv['index'] == int(d['gpu']) and 'error' not in dv and \
                                    dv['nvmlDeviceGetTotalEccErrors']['corrected_volatile'] != int(last[0]):
                                err.add(case, 'DCGM vs NVML ECC disagree %s gpu%s' % (host, d['gpu']))
                if name == 'DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL':
                    f = 'nodes/%s/cmd/nvidia-smi-nvlink-e.txt' % host
                    if f in text:
                        kv = kv_counters(text[f])
                        tot = sum(v for k, v in kv.items() if k.startswith('gpu%s/' % d['gpu']) and k.endswith('CRC Errors'))
                        if tot != int(last[0]):
                            err.add(case, 'DCGM vs nvlink -e CRC disagree %s gpu%s' % (host, d['gpu']))
    # PFC: host NIC tx pauses == switch port rx pauses (and switch tx == NIC rx)
    sw_pfc = {}
    for rel in text:
        m = re.match(r'^switches/([^/]+)/cmd/show-pfc-counters.txt$', rel)
        if m:
            mode = None
            for ln in text[rel].split('\n'):
                if 'Port Rx' in ln:
                    mode = 'rx'
                elif 'Port Tx' in ln:
                    mode = 'tx'
                elif ln.strip() and not ln.startswith('-') and mode:
                    parts = ln.split()
                    sw_pfc[(m.group(1), parts[0], mode)] = int(parts[4].replace(',', ''))
    for h in hosts.values():
        for n in h.get('nics', []):
            if 'switch' not in n:
                continue
            f = 'nodes/%s/cmd/ethtool-S-%s.txt' % (h['name'], n['netdev'])
            if f in text and (n['switch'], n['switch_port'], 'rx') in sw_pfc:
                kv = kv_counters(text[f])
                if kv.get('tx_prio3_pause') != sw_pfc[(n['switch'], n['switch_port'], 'rx')]:
                    err.add(case, 'PFC disagree NIC tx vs switch rx %s %s' % (h['name'], n['netdev']))
                if kv.get('rx_prio3_pause') != sw_pfc[(n['switch'], n['switch_port'], 'tx')]:
                    err.add(case, 'PFC disagree NIC rx vs switch tx %s %s' % (h['name'], n['netdev']))
    # steps physics
    if 'job/steps.csv' in text:
        check_steps(case, text['job/steps.csv'], inc, err)
    # component exists
    comp = truth.get('component')
    switches = {s['name']: s for s in topo.get('switches', [])}
    sw_dirs = set(rel.split('/')[1] for rel in text if rel.startswith('switches/'))
    if comp and comp != 'job':
        parts = comp.split('/', 1)
        head = parts[0]
        if head in hosts or head in node_hosts:
            if len(parts) == 2:
                sub = parts[1]
                h = hosts.get(head, {})
                gpus = set('gpu%d' % g['index'] for g in h.get('gpus', []))
                ibdevs = set(n['ibdev'] for n in h.get('nics', []))
                if sub not in gpus | ibdevs:
                    err.add(case, 'component %s: %s not on host' % (comp, sub))
        elif head in switches or head in sw_dirs:
            if len(parts) == 2:
                port = parts[1]
                ports = set()
                for s in topo.get('switches', []):
                    for l in s.get('links', []):
                        if s['name'] == head:
                            ports.add(l['port'])
                for h in hosts.values():
                    for n in h.get('nics', []):
                        if n.get('switch') == head:
                            ports.add(n.get('switch_port'))
                if port not in ports:
                    err.add(case, 'component %s: port not in topology' % comp)
        else:
            err.add(case, 'component %s not in bundle' % comp)
    nh = len(hosts)
    for rel, series in om.items():
        hs = set()
        for (name, lab) in series:
            d = dict(lab)
            hs.add(d.get('hostname') or d.get('Hostname') or d.get('instance', '').split(':')[0])
        nh = max(nh, len(hs))
    return dict(truth, hosts=nh)


def main(argv):
    if len(argv) != 2:
        print(__doc__)
        return 2
    root = argv[1]
    err = Errors()
    cases = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
    results = {}
    for case in cases:
        r = validate_case(root, case, err)
        if r:
            results[case] = r
    by = defaultdict(int)
    for r in results.values():
        by[r['root_cause']] += 1
    if len(results) < 32:
        err.add('set', 'only %d cases' % len(results))
    for c in CAUSES:
        if by[c] < 2:
            err.add('set', 'root cause %s appears %d times' % (c, by[c]))
    if by['healthy'] < 4:
        err.add('set', 'fewer than 4 healthy controls')
    if not any(r['hosts'] >= 256 for r in results.values()):
        err.add('set', 'no case with >= 256 hosts')
    for e in err.items[:200]:
        print('FAIL', e)
    print('%d cases, %d problems; root causes: %s' % (len(results), len(err.items),
                                                    ', '.join('%s=%d' % (k, by[k]) for k in CAUSES)))
    return 1 if err.items else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
