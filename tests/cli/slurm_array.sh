#!/usr/bin/env bash
# The Slurm job array flow of docs/sweeps.md, run for real: a private one-node Slurm (munged, slurmctld and slurmd
# on 127.0.0.1, everything in a temp folder) takes `sbatch --array` of the sweep shards, then a merge job held by
# `--dependency=afterany:$jid`; every job must end COMPLETED and the merged sweep.csv and sweep.json must equal the
# unsharded sweep's byte for byte. Oracle: the unsharded `cpsim sweep` of the same points.
# When no Slurm can start here (packages missing, a daemon that will not come up) it prints one "SKIP: why" line
# and exits 77, which tests/CMakeLists.txt maps to a skipped test. Once Slurm is up, any failure is a FAIL.
# Usage: slurm_array.sh CPSIM SOURCE_DIR [BUILD_DIR]
set -u
cpsim=$1; src=$2
cd "$src"
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }

for c in munged mungekey munge unmunge slurmctld slurmd sbatch squeue sinfo scontrol scancel; do
  command -v $c >/dev/null || skip "no $c on PATH (Debian: apt-get install slurm-wlm munge)"
done
# Inside a real Slurm job the inherited SLURM_* variables would point the clients at that cluster.
for v in $(compgen -e | grep '^SLURM_'); do unset "$v"; done

tmp=$(mktemp -d)
pids=(); ctld_up=0
cleanup() {
  # Cancel what is left (only this private cluster: SLURM_CONF), then stop the daemons we started, newest first.
  # scancel retries for many seconds when no slurmctld answers, hence only once it has and with a time limit.
  ((ctld_up)) && timeout 5 scancel --quiet --user="$(id -un)" 2>/dev/null
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[i]}" 2>/dev/null; wait "${pids[i]}" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM  # so that a ctest timeout or ^C still stops the daemons
# wait_for SECONDS COMMAND...: poll every 0.2 s until COMMAND succeeds; give up early when the daemon started
# last has died (its log then says why).
wait_for() {
  local end=$((SECONDS + $1)); shift
  while kill -0 "${pids[-1]}" 2>/dev/null; do
    "$@" >/dev/null 2>&1 && return 0
    ((SECONDS < end)) || return 1
    sleep 0.2
  done
  return 1
}
last_line() { tail -n 1 "$1" 2>/dev/null | tr -d '\n'; }
mkdir -p "$tmp/munge" "$tmp/state" "$tmp/spool" "$tmp/logs" "$tmp/out"
# munged wants its socket folder and the folders above it searchable by all; the key itself stays 0600.
chmod 755 "$tmp" "$tmp/munge"

# munge: a fresh key and a private socket, so neither the system munged nor /etc/munge is needed.
sock=$tmp/munge/munge.socket
mungekey --create --keyfile="$tmp/munge/munge.key" 2>"$tmp/munge/mungekey.err" ||
  skip "mungekey could not make a key: $(last_line "$tmp/munge/mungekey.err")"
munged --foreground --socket="$sock" --key-file="$tmp/munge/munge.key" --log-file="$tmp/munge/munged.log" \
  --pid-file="$tmp/munge/munged.pid" --seed-file="$tmp/munge/munged.seed" 2>>"$tmp/munge/munged.log" &
pids+=($!)
wait_for 10 bash -c "munge -n -S '$sock' | unmunge -S '$sock'" ||
  skip "munged did not come up (exited, or no answer within 10 s): $(last_line "$tmp/munge/munged.log")"

# Two ports the kernel says are free now (fixed ports would clash with a real Slurm or a parallel run).
read -r ctld_port slurmd_port < <(/usr/bin/python3 -c '
import socket
ss = [socket.socket() for _ in range(2)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])')
[ -n "${slurmd_port:-}" ] || skip "could not find two free TCP ports"

# Slurm runs as whoever runs the test; slurmd as non-root can only start jobs of that same user, which is all we
# submit. config_overrides trusts CPUs/RealMemory below instead of draining the node when the hardware differs.
user=$(id -un)
export SLURM_CONF=$tmp/slurm.conf
cat > "$SLURM_CONF" <<EOF
ClusterName=cpsimtest
SlurmctldHost=localhost
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SlurmdParameters=config_overrides
ReturnToService=2
MinJobAge=600
SchedulerParameters=sched_interval=1
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF

slurmctld -D -i -f "$SLURM_CONF" >>"$tmp/slurmctld.log" 2>&1 &
pids+=($!)
wait_for 20 scontrol ping ||
  skip "slurmctld did not come up (exited, or no answer within 20 s): $(last_line "$tmp/slurmctld.log")"
ctld_up=1
# -N: the node is called localhost whatever this machine's hostname is.
slurmd -D -N localhost -f "$SLURM_CONF" >>"$tmp/slurmd.log" 2>&1 &
pids+=($!)
node_idle() { [ "$(sinfo -h -n localhost -o %T)" = idle ]; }
wait_for 30 node_idle ||
  skip "slurmd did not bring the node up (exited, or not idle within 30 s): $(last_line "$tmp/slurmd.log")"

# From here on Slurm works, so anything wrong is a failure.
logs() { for f in "$tmp"/logs/*.log "$tmp/slurmctld.log" "$tmp/slurmd.log"; do echo "== $f"; tail -n 20 "$f"; done; }
# 6 points over 4 array tasks: shards of 2, 2, 1 and 1 points.
sweep_args=(scenarios/sweep-cp-seqlen.yaml --axis parallel.cp=2,4 --axis run.seq_len=32K,64K,128K
            --set model.layers=1)
shards=4
cat > "$tmp/sweep.sbatch" <<EOF
#!/bin/bash
#SBATCH --job-name=cpsim-sweep
#SBATCH --cpus-per-task=1
#SBATCH --time=00:05:00
#SBATCH --output=$tmp/logs/%x-%A_%a.log
cd "\$SLURM_SUBMIT_DIR"
"$cpsim" sweep ${sweep_args[*]} -j "\$SLURM_CPUS_PER_TASK" \\
    --shard "\$SLURM_ARRAY_TASK_ID/\$SLURM_ARRAY_TASK_COUNT" -o "$tmp/out/sweep/shard-\$SLURM_ARRAY_TASK_ID"
EOF
jid=$(sbatch --parsable --array=0-$((shards - 1)) "$tmp/sweep.sbatch") || { logs; fail "sbatch --array refused"; }
# The shard glob is expanded by the merge job, after the array, as in the docs.
mjid=$(sbatch --parsable --dependency=afterany:"$jid" --job-name=cpsim-merge --output="$tmp/logs/merge.log" \
  --wrap "'$cpsim' merge '$tmp/out/sweep/'shard-* -o '$tmp/out/sweep/all'") ||
  { logs; fail "sbatch of the merge refused"; }
queue_empty() { [ -z "$(squeue -h -j "$jid,$mjid" -o %i)" ]; }
wait_for 120 queue_empty || { logs; fail "the jobs were still queued or running after 120 s"; }

# No accounting database here: the finished jobs' states come from slurmctld's memory (MinJobAge keeps them).
states=$(scontrol -o show job "$jid"; scontrol -o show job "$mjid")
ran=$(grep -o 'JobState=[A-Z_]*' <<<"$states" | sort | uniq -c | tr -s ' ')
[ "$ran" = " $((shards + 1)) JobState=COMPLETED" ] ||
  { logs; fail "expected $((shards + 1)) COMPLETED jobs, got:$ran"; }
grep -q "ExitCode=[1-9]" <<<"$states" && { logs; fail "a job exited non-zero"; }
for i in $(seq 0 $((shards - 1))); do [ -f "$tmp/out/sweep/shard-$i/sweep.csv" ] || fail "no shard $i output"; done

"$cpsim" sweep "${sweep_args[@]}" -j 2 -o "$tmp/full" >/dev/null 2>&1 || fail "the unsharded sweep"
cmp "$tmp/full/sweep.csv" "$tmp/out/sweep/all/sweep.csv" || fail "merged sweep.csv differs from the unsharded one"
cmp "$tmp/full/sweep.json" "$tmp/out/sweep/all/sweep.json" || fail "merged sweep.json differs from the unsharded one"
echo "slurm array: $shards array tasks and an afterany merge completed; merged sweep.csv equals the unsharded one"
