#!/usr/bin/env bash
# The control plane under many workers, as the control-plane issue measured it: starts N
# iofleet-worker processes from BIN_DIR (a bazel-bin, e.g. of this checkout and of a worktree
# at an older commit) on 127.0.0.1:21000+, runs a 10 s null-engine job at RATE IOPS per worker
# through BIN_DIR's controller (--hostfile), prints the controller's CPU (of one core) and RSS
# and how many workers completed, and stops the workers. A benchmark, not a test.
#   bench/scale_compare.sh "$(readlink -f bazel-bin)" 256 50
set -u
bin=$1; n=$2; rate=$3
dir=$(mktemp -d /tmp/scale-XXXXXX); : > $dir/hosts
printf '[s]\nioengine=null\nrw=randread\nbs=4k\nsize=1g\nrate_iops=%s\ntime_based\nruntime=10s\n' $rate > $dir/job.fio
for i in $(seq 0 $((n-1))); do p=$((21000+i)); $bin/worker/iofleet-worker --listen 127.0.0.1:$p --allow-root $dir > /dev/null 2>&1 & echo 127.0.0.1:$p >> $dir/hosts; done
for i in $(seq 0 100); do [ "$(ss -ltn | grep -c '127.0.0.1:2[01][0-9][0-9][0-9] ')" -ge $n ] && break; sleep 0.1; done
/usr/bin/time -f "%e %U %S %M" -o $dir/time $bin/controller/iofleet run $dir/job.fio --hostfile $dir/hosts --results-dir none --quiet --output-format iofleet-json --output $dir/out.json >/dev/null 2>$dir/err
python3 - $dir $n $rate <<'PY'
import json,sys
d,n,rate=sys.argv[1],sys.argv[2],sys.argv[3]
e,u,s,m=open(d+'/time').read().split()[-4:]
r=json.load(open(d+'/out.json'))
print(f"{n} workers x {rate} IOPS: controller CPU {100*(float(u)+float(s))/float(e):.0f}% of a core, RSS {int(m)//1024} MB, completed {r.get('workersCompleted',r.get('workers_completed',0))} of {len(r['workers'])}")
PY
pkill -f "allow-root $dir"; sleep 1; [ -n "${KEEP:-}" ] && echo "kept $dir" || rm -rf $dir
