#!/usr/bin/env bash
# A private single-node Slurm cluster on loopback (slurmctld + slurmd + munged), for `roller slurm` on a machine without
# a cluster, and for the tests. Everything it keeps (config, key, state, logs, sockets) is under one directory.
#
#   scripts/slurm-cluster.sh install       install slurm-wlm and munge when missing: root + apt
#   scripts/slurm-cluster.sh start DIR     start it under DIR; prints SLURM_CONF=DIR/slurm.conf (export it)
#   scripts/slurm-cluster.sh stop DIR      stop it (and its jobs)
#
# Its ports are the first free pair from 16817; the node is this host with all its CPUs, one partition "roller".
set -euo pipefail

die() { echo "slurm-cluster: $*" >&2; exit 1; }
cmd=${1:-}
dir=${2:-}
need_dir() { [ -n "$dir" ] || die "$cmd needs a directory (the cluster's home), e.g. /tmp/roller-slurm"; }

install() {
  local missing=()
  command -v slurmctld >/dev/null || missing+=(slurm-wlm)
  command -v munged >/dev/null || missing+=(munge)
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" = 0 ] || die "${missing[*]} missing and not root: install them (apt-get install ${missing[*]}), or run as root"
  command -v apt-get >/dev/null || die "${missing[*]} missing and there is no apt-get: install Slurm (≥ 22.05) and MUNGE"
  echo "slurm-cluster: installing ${missing[*]} (apt)" >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

free_port() {
  local p=$1
  while (echo >/dev/tcp/127.0.0.1/$p) 2>/dev/null || (echo >/dev/tcp/127.0.0.1/$((p + 1))) 2>/dev/null; do p=$((p + 2)); done
  echo "$p"
}

start() {
  need_dir
  [ "$(id -u)" = 0 ] || die "start needs root (slurmd runs jobs as their users)"
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  [ -f "$dir/slurmctld.pid" ] && kill -0 "$(cat "$dir/slurmctld.pid")" 2>/dev/null && die "a cluster already runs under $dir"
  mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
  chmod 700 "$dir/munge"
  [ -f "$dir/munge/munge.key" ] || { dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none; chmod 600 "$dir/munge/munge.key"; }
  munged --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.sock" --pid-file="$dir/munge/munged.pid" \
    --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/seed" -f
  local port node cpus mem
  port=$(free_port 16817)
  node=$(hostname -s)
  cpus=$(nproc)
  mem=$(($(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 * 3 / 4))
  cat >"$dir/slurm.conf" <<CONF
ClusterName=roller
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=roller Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
  export SLURM_CONF="$dir/slurm.conf"
  slurmctld -i
  slurmd
  for _ in $(seq 1 100); do
    sinfo -h -o %T 2>/dev/null | grep -q idle && { echo "SLURM_CONF=$SLURM_CONF"; return 0; }
    sleep 0.1
  done
  die "the node did not become idle in 10 s; see $dir/slurmctld.log and $dir/slurmd.log"
}

stop() {
  need_dir
  dir=$(cd "$dir" 2>/dev/null && pwd) || return 0
  export SLURM_CONF="$dir/slurm.conf"
  [ -f "$SLURM_CONF" ] && scancel --quiet --full "--user=$(id -un)" 2>/dev/null || true
  for f in slurmd slurmctld munge/munged; do
    [ -f "$dir/$f.pid" ] || continue
    local pid
    pid=$(cat "$dir/$f.pid")
    kill "$pid" 2>/dev/null || continue
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
}

case "$cmd" in
  install) install ;;
  start) start ;;
  stop) stop ;;
  *) die "usage: $0 install | start DIR | stop DIR" ;;
esac
