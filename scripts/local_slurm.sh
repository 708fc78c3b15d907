#!/usr/bin/env bash
# A one-node Slurm on this machine, for trying `forensic execute` and the page's Execute and Undo.
#
#   sudo scripts/local_slurm.sh start [DIR]   # munged, slurmctld and slurmd in DIR (default /tmp/forensic-slurm)
#   sudo scripts/local_slurm.sh stop [DIR]
#
# Needs the Debian/Ubuntu packages slurmctld, slurmd, slurm-client and munge, and root (slurmd
# manages the node as root). Everything lives in DIR, on free loopback ports; nothing under /etc
# is touched. The node is this machine's short host name; point executors.toml's [slurm] at
# DIR/slurm.conf and map the bundle's host onto that node.
set -euo pipefail
cmd=${1:-}
dir=${2:-/tmp/forensic-slurm}
node=$(hostname -s)

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

case "$cmd" in
start)
  mkdir -p "$dir/state" "$dir/spool"
  head -c 1024 /dev/urandom > "$dir/munge.key"
  chmod 600 "$dir/munge.key"
  cat > "$dir/slurm.conf" <<EOF
ClusterName=forensiclocal
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/linear
SchedulerType=sched/builtin
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
NodeName=$node NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
  munged --force --socket="$dir/munge.sock" --key-file="$dir/munge.key" --pid-file="$dir/munged.pid" \
    --log-file="$dir/munged.log" --seed-file="$dir/munge.seed"
  slurmctld -f "$dir/slurm.conf"
  slurmd -f "$dir/slurm.conf"
  for _ in $(seq 120); do
    state=$(SLURM_CONF="$dir/slurm.conf" sinfo -h -N -n "$node" -o %T 2>/dev/null || true)
    case "$state" in idle*|mixed*|allocated*) break ;; esac
    sleep 0.5
  done
  echo "slurm up: node $node is ${state:-unknown}; SLURM_CONF=$dir/slurm.conf"
  ;;
stop)
  for name in slurmd slurmctld munged; do
    [ -f "$dir/$name.pid" ] && kill "$(cat "$dir/$name.pid")" 2>/dev/null || true
  done
  echo "slurm stopped ($dir kept)"
  ;;
*)
  echo "usage: $0 start|stop [DIR]" >&2
  exit 2
  ;;
esac
