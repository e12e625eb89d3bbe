#!/usr/bin/env bash
# Start a one-node SLURM cluster on this machine, with accounting, as on a real cluster:
# munged, MariaDB on 127.0.0.1, slurmdbd, slurmctld and slurmd (Debian's packages, installed if missing).
# Idempotent and non-interactive: running daemons are kept, every client call is bounded by a timeout,
# and the script returns once the node is idle. Needs root (packages, daemons, /etc/slurm).
#
#   cluster/start_local_slurm.sh      # then: snakemake --profile profiles/slurm --workflow-profile profiles/slurm-local ...
#   cluster/stop_local_slurm.sh
#
# The node has two partitions, `cpu` (default) and `gpu`, named as in profiles/slurm, and two GPUs in
# gres backed by stand-in device files: GPU requests are scheduled and recorded, the job runs on CPU.
set -euo pipefail

CLUSTER=neurips26
ACCOUNT=local
DB_NAME=slurm_acct_db
DB_USER=slurm
DB_PASS=neurips26-local-slurm
CALL_TIMEOUT=10
GPUS=2               # one per core, so two GPU steps can run side by side
GPU_FILES=/dev/null,/dev/zero  # stand-in device files: Slurm counts a GPU per file
LOG_DIR=/var/log/slurm
PACKAGES="slurmctld slurmd slurm-client munge slurmdbd mariadb-server"

log() { echo "[local-slurm] $*" >&2; }
die() { echo "[local-slurm] error: $*" >&2; exit 1; }
bounded() { timeout "$CALL_TIMEOUT" "$@"; }

# wait_for <seconds> <what> <command...>: poll until the command succeeds
wait_for() {
    local seconds=$1 what=$2
    shift 2
    local deadline=$((SECONDS + seconds))
    until "$@" >/dev/null 2>&1; do
        if ((SECONDS >= deadline)); then
            die "$what not ready after ${seconds}s (logs in $LOG_DIR)"
        fi
        sleep 0.5
    done
}

alive() { # alive <pidfile>
    [[ -s $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null
}

[[ $(id -u) == 0 ]] || die "run as root: it installs Debian packages, starts daemons and writes /etc/slurm"

install_packages() {
    local bin missing=0
    for bin in slurmctld slurmd sbatch sacct munged slurmdbd mariadbd; do
        command -v "$bin" >/dev/null || missing=1
    done
    ((missing)) || return 0
    log "installing $PACKAGES"
    export DEBIAN_FRONTEND=noninteractive
    # shellcheck disable=SC2086
    if ! timeout 600 apt-get install -y -q --no-install-recommends $PACKAGES >/tmp/neurips26-apt.log 2>&1; then
        timeout 300 apt-get update -q >>/tmp/neurips26-apt.log 2>&1 || die "apt-get update failed (see /tmp/neurips26-apt.log)"
        timeout 600 apt-get install -y -q --no-install-recommends $PACKAGES >>/tmp/neurips26-apt.log 2>&1 ||
            die "could not install $PACKAGES (see /tmp/neurips26-apt.log)"
    fi
}

start_munge() {
    if [[ ! -s /etc/munge/munge.key ]]; then
        mungekey --create --keyfile=/etc/munge/munge.key
    fi
    chown munge:munge /etc/munge/munge.key
    chmod 0400 /etc/munge/munge.key
    mkdir -p /run/munge /var/log/munge /var/lib/munge
    chown munge:munge /run/munge /var/log/munge /var/lib/munge
    if ! alive /run/munge/munged.pid; then
        log "starting munged"
        runuser -u munge -- /usr/sbin/munged
    fi
    wait_for 20 munged bash -c 'munge -n | unmunge'
}

start_mariadb() {
    if ! bounded mariadb-admin --connect-timeout=2 ping >/dev/null 2>&1; then
        log "starting mariadbd on 127.0.0.1"
        mkdir -p /run/mysqld
        chown mysql:mysql /run/mysqld
        setsid nohup mariadbd --user=mysql --bind-address=127.0.0.1 \
            --innodb-buffer-pool-size=256M --innodb-lock-wait-timeout=900 \
            >/var/log/neurips26-mariadb.log 2>&1 </dev/null &
        wait_for 60 mariadbd mariadb-admin --connect-timeout=2 ping
    fi
    bounded mariadb -e "CREATE DATABASE IF NOT EXISTS $DB_NAME;
        CREATE USER IF NOT EXISTS '$DB_USER'@'localhost' IDENTIFIED BY '$DB_PASS';
        CREATE USER IF NOT EXISTS '$DB_USER'@'127.0.0.1' IDENTIFIED BY '$DB_PASS';
        GRANT ALL ON $DB_NAME.* TO '$DB_USER'@'localhost';
        GRANT ALL ON $DB_NAME.* TO '$DB_USER'@'127.0.0.1';
        FLUSH PRIVILEGES;"
}

# write_if_changed <path> <mode> <content>: returns 0 when the file changed
write_if_changed() {
    local path=$1 mode=$2 content=$3
    if [[ -f $path ]] && [[ "$(cat "$path")" == "$content" ]]; then
        return 1
    fi
    printf '%s\n' "$content" >"$path"
    chmod "$mode" "$path"
    return 0
}

start_slurmdbd() {
    local conf
    conf="AuthType=auth/munge
DbdHost=localhost
DbdAddr=127.0.0.1
SlurmUser=root
LogFile=$LOG_DIR/slurmdbd.log
PidFile=/run/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StorageUser=$DB_USER
StoragePass=$DB_PASS
StorageLoc=$DB_NAME"
    if write_if_changed /etc/slurm/slurmdbd.conf 600 "$conf" && alive /run/slurmdbd.pid; then
        kill "$(cat /run/slurmdbd.pid)"
        wait_for 20 "slurmdbd stop" bash -c '! kill -0 $(cat /run/slurmdbd.pid) 2>/dev/null'
    fi
    if ! alive /run/slurmdbd.pid; then
        log "starting slurmdbd (its first start creates the tables)"
        slurmdbd
    fi
    wait_for 90 slurmdbd timeout 5 sacctmgr -n show cluster
    if [[ -z $(bounded sacctmgr -n -P show cluster format=cluster where cluster=$CLUSTER) ]]; then
        bounded sacctmgr -i add cluster $CLUSTER >/dev/null
    fi
}

slurm_conf() {
    local hardware
    hardware=$(slurmd -C | head -1 | sed -E 's/^NodeName=[^ ]+ //')
    cat <<CONF
# Written by cluster/start_local_slurm.sh: one node, two partitions, accounting through slurmdbd.
ClusterName=$CLUSTER
SlurmctldHost=$HOST(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=task=1
JobAcctGatherParams=OverMemoryKill
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStorageTRES=gres/gpu
AccountingStoreFlags=job_comment
GresTypes=gpu
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerParameters=sched_interval=2
MinJobAge=3600
KillWait=5
ReturnToService=2
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=$LOG_DIR/slurmctld.log
SlurmdLogFile=$LOG_DIR/slurmd.log
NodeName=$HOST NodeAddr=127.0.0.1 $hardware Gres=gpu:$GPUS State=UNKNOWN
PartitionName=cpu Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes=$HOST MaxTime=INFINITE State=UP
CONF
}

stop_pidfile() { # stop_pidfile <pidfile>
    if alive "$1"; then
        kill "$(cat "$1")"
        wait_for 20 "stop of $(basename "$1" .pid)" bash -c "! kill -0 \$(cat $1) 2>/dev/null"
    fi
}

# write_slurm_conf: client commands (sacctmgr included) read it, so it comes before slurmdbd;
# a changed config restarts slurmctld and slurmd
write_slurm_conf() {
    mkdir -p /var/spool/slurmctld /var/spool/slurmd "$LOG_DIR"
    local changed=0
    write_if_changed /etc/slurm/gres.conf 644 "NodeName=$HOST Name=gpu File=$GPU_FILES Count=$GPUS" && changed=1
    write_if_changed /etc/slurm/slurm.conf 644 "$(slurm_conf)" && changed=1
    if ((changed)); then
        stop_pidfile /run/slurmd.pid
        stop_pidfile /run/slurmctld.pid
    fi
}

start_slurm() {
    if ! alive /run/slurmctld.pid; then
        log "starting slurmctld"
        slurmctld -i
    fi
    wait_for 30 slurmctld timeout 5 scontrol ping
    if ! alive /run/slurmd.pid; then
        log "starting slurmd"
        slurmd -N "$HOST"
    fi
}

add_account() {
    if [[ -z $(bounded sacctmgr -n -P show account format=account where account=$ACCOUNT) ]]; then
        bounded sacctmgr -i add account $ACCOUNT cluster=$CLUSTER >/dev/null
    fi
    if [[ -z $(bounded sacctmgr -n -P show assoc format=user where user=root account=$ACCOUNT) ]]; then
        bounded sacctmgr -i add user root account=$ACCOUNT defaultaccount=$ACCOUNT >/dev/null
    fi
}

node_idle() {
    local state
    state=$(timeout 5 sinfo -h -N -n "$HOST" -o %T | head -1)
    case $state in
    idle | mixed | allocated) return 0 ;;
    inval*) die "node $HOST rejected its configuration: $(timeout 5 sinfo -h -N -n "$HOST" -o %E)" ;;
    down* | drain* | *fail*) timeout 5 scontrol update nodename="$HOST" state=resume >/dev/null 2>&1 || true ;;
    esac
    return 1
}

HOST=$(hostname -s)
started=$SECONDS
install_packages
start_munge
start_mariadb
write_slurm_conf
start_slurmdbd
start_slurm
add_account
wait_for 60 "node $HOST" node_idle
log "cluster $CLUSTER up in $((SECONDS - started))s: $(bounded sinfo -h -o '%P %a %D %T' | tr '\n' ' ')"
