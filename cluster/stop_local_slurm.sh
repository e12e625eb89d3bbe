#!/usr/bin/env bash
# Stop the one-node SLURM cluster started by cluster/start_local_slurm.sh: cancel its jobs, then stop
# slurmd, slurmctld, slurmdbd, MariaDB and munged. Idempotent: daemons that are not running are skipped.
# Packages, configuration and the accounting database are kept, so the next start takes seconds.
set -euo pipefail

log() { echo "[local-slurm] $*" >&2; }
die() { echo "[local-slurm] error: $*" >&2; exit 1; }

[[ $(id -u) == 0 ]] || die "run as root: the daemons run as root or as their service users"

alive() { [[ -s $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

# stop <name> <pidfile>: SIGTERM, then SIGKILL after 20 s
stop() {
    local name=$1 pidfile=$2 pid deadline
    alive "$pidfile" || return 0
    pid=$(cat "$pidfile")
    log "stopping $name ($pid)"
    kill "$pid"
    deadline=$((SECONDS + 20))
    while kill -0 "$pid" 2>/dev/null; do
        if ((SECONDS >= deadline)); then
            log "$name did not stop in 20s: killing it"
            kill -9 "$pid" 2>/dev/null || true
            break
        fi
        sleep 0.2
    done
}

if alive /run/slurmctld.pid; then
    timeout 10 scancel --full --quiet --user=root 2>/dev/null || log "scancel failed; stopping anyway"
fi
stop slurmd /run/slurmd.pid
stop slurmctld /run/slurmctld.pid
stop slurmdbd /run/slurmdbd.pid
stop mariadbd /run/mysqld/mysqld.pid
stop munged /run/munge/munged.pid
log "stopped"
