#!/usr/bin/env bash
# The control plane at scale (issue 14's benchmark; a benchmark, not a test): for each N given,
# starts N real iofleet-worker processes on 127.0.0.1, runs 8 null-engine jobs at a low
# rate_iops for DURATION (1 s intervals) through one controller (--hostfile), and prints the
# controller's CPU (% of one core: over the whole command, which includes connecting, preparing
# and writing the reports, and while the run's intervals are published) and peak RSS, how long
# after an interval's end the cluster
# interval was published (p50/p99, first publications; and how many of those had every worker's
# report in: the rest were published at the grace's end, then amended), the start skew and late starts, the
# workers declared lost and those that stopped on their lease before the end (a controller or
# relay that renewed leases too late), whether the totals equal the sum of the workers', and for
# simulated fleets the simulators' and relays' own CPU during the run (cores: more than this
# machine has, and the fleet's workers stop on their leases — the figures are not the controller's).
#   bench/scale_bench.sh [N ...]          default: 64 256 1024; BIN=bazel-bin DURATION=30s RATE=1 JOBS=8
#                                         FLAGS="--worker-intervals all": more controller options
#                                         SIM_FLAGS: more simulator options; SIM_PROCS: simulator
#                                         processes for relayN/R (default R/10, one per ten relays,
#                                         when 10 divides R; else R);
#                                         RELAY_FLAGS: more relay options (e.g. --lease 20s)
# An N written simN plays N workers from one iofleet-fleet-sim process (sim/fleet_sim.cc: the
# worker's session code, made-up reports with BUCKETS=200 non-empty histogram buckets per job
# and interval) dialling the controller; relayN/R puts R iofleet relay processes between them
# (N/R simulated workers each). On a cluster the workers, the relays and the controller each have
# hosts of their own; here they share two cores, so the simulated fleet yields to what it feeds:
# simN's simulator runs at SIM_NICE=10 under the controller; behind relays the simulators run at
# SIM_NICE=19, the relays at RELAY_NICE=5 and the controller at 0, and a simulator puts 100 of
# its workers' sessions on one connection (SIM_FLAGS="--workers-per-connection 100"; each is
# still a session of its own, with its own stream, messages and lease). Without these, 10,000
# simulated workers and their 100 relays need more of the two cores than the run leaves them
# (README, Benchmarks): their leases run out on this machine, not on the controller's account.
# RATE is each job's rate_iops. The workers share the controller's host, and every paced IO is a
# thread wakeup (about 20-40 us of CPU each in this VM): 1,024 workers x 8 jobs x 10 IOPS would
# be 82,000 wakeups a second, more than the two cores have, before any control traffic.
set -u
bin=${BIN:-$(readlink -f "$(dirname "$0")/../bazel-bin")}
duration=${DURATION:-30s}
rate=${RATE:-1}
counts=("$@"); [ ${#counts[@]} -eq 0 ] && counts=(64 256 1024)
[ -x "$bin/controller/iofleet" ] && [ -x "$bin/worker/iofleet-worker" ] && [ -x "$bin/sim/iofleet-fleet-sim" ] ||
  { echo "build first: bazel build //controller:iofleet //worker:iofleet-worker //sim:iofleet-fleet-sim" >&2; exit 2; }
ulimit -n 65536 2>/dev/null || true
printf '%-8s %-10s %-10s %-9s %-12s %-12s %-9s %-11s %-6s %-5s %-8s %-12s %s\n' workers "ctl CPU" "during run" "ctl RSS" "publish p50" "publish p99" complete "start skew" late lost stopped "totals exact" "fleet CPU"
for spec in "${counts[@]}"; do
  dir=$(mktemp -d /tmp/scale-bench-XXXXXX)
  for j in $(seq 1 "${JOBS:-8}"); do
    printf '[j%s]\nioengine=null\nrw=randread\nbs=4k\nsize=1g\nrate_iops=%s\ntime_based\nruntime=%s\n' "$j" "$rate" "$duration"
  done > "$dir/job.fio"
  base=$((30000 + RANDOM % 20000))
  fleet=()  # the simulators' and relays' processes (their CPU is printed: can this machine carry them?)
  case "$spec" in
    sim*)  # simulated workers dial the controller
      n=${spec#sim}; relays=0
      where=(--listen 127.0.0.1:$base --expect-workers "$n" --wait 10m)
      nice -n "${SIM_NICE:-10}" "$bin/sim/iofleet-fleet-sim" --controller 127.0.0.1:$base --workers "$n" --buckets "${BUCKETS:-200}" ${SIM_FLAGS:-} > /dev/null 2> "$dir/sim-${r:-0}.err" &
      fleet+=($!)
      ;;
    relay*)  # simulated workers dial R relays, which dial the controller
      n=${spec#relay}; relays=${n#*/}; n=${n%/*}
      where=(--listen 127.0.0.1:$base --expect-workers "$relays" --wait 10m)
      # SIM_PROCS simulator processes, each feeding relays/SIM_PROCS relays.
      procs=${SIM_PROCS:-$([ $((relays % 10)) -eq 0 ] && echo $((relays / 10)) || echo "$relays")}
      [ $((relays % procs)) -eq 0 ] || { echo "SIM_PROCS=$procs must divide $relays relays" >&2; exit 2; }
      fed=""
      for r in $(seq 1 "$relays"); do
        nice -n "${RELAY_NICE:-5}" "$bin/controller/iofleet" relay --listen 127.0.0.1:$((base + r)) --controller 127.0.0.1:$base --expect-workers $((n / relays)) \
          --wait 10m ${RELAY_FLAGS:-} > /dev/null 2> "$dir/relay-$r.err" &
        fleet+=($!)
        fed="${fed:+$fed,}127.0.0.1:$((base + r))"
        if [ $((r % (relays / procs))) -eq 0 ]; then
          nice -n "${SIM_NICE:-19}" "$bin/sim/iofleet-fleet-sim" --controller "$fed" --workers $((n / procs)) --buckets "${BUCKETS:-200}" \
            ${SIM_FLAGS---workers-per-connection 100} > /dev/null 2> "$dir/sim-$r.err" &
          fleet+=($!)
          fed=""
        fi
      done
      ;;
    *)  # real workers, listening; the controller dials them
      n=$spec; relays=0
      : > "$dir/hosts"
      for i in $(seq 0 $((n - 1))); do
        port=$((base + i))
        "$bin/worker/iofleet-worker" --listen 127.0.0.1:$port --allow-root "$dir" > /dev/null 2>&1 &
        echo 127.0.0.1:$port >> "$dir/hosts"
      done
      # Until every worker listens (bounded).
      for _ in $(seq 1 600); do
        [ "$(ss -ltn "sport >= :$base and sport < :$((base + n))" | tail -n +2 | wc -l)" -ge "$n" ] && break
        sleep 0.2
      done
      where=(--hostfile "$dir/hosts")
      ;;
  esac
  /usr/bin/time -f "%e %U %S %M" -o "$dir/time" "$bin/controller/iofleet" run "$dir/job.fio" "${where[@]}" --quiet ${FLAGS:-} \
    --results-dir "$dir/results" --output "$dir/report.txt" > /dev/null 2> "$dir/err" &
  timer=$!
  # The controller's CPU time, sampled every second with the wall clock (ticks of 10 ms).
  controller=""
  for _ in $(seq 1 50); do controller=$(pgrep -P "$timer" -f "controller/iofleet run" | head -1); [ -n "$controller" ] && break; sleep 0.1; done
  while [ -n "$controller" ] && [ -r "/proc/$controller/stat" ]; do
    # (One awk for the whole fleet: a process per simulator or relay and second would be load.)
    ticks=0
    if [ ${#fleet[@]} -gt 0 ]; then
      stats=("${fleet[@]/#//proc/}")
      ticks=$(awk '{s += $14 + $15} END {print s + 0}' "${stats[@]/%//stat}" 2>/dev/null)
    fi
    echo "$(date +%s%N) $(awk '{print $14 + $15}' "/proc/$controller/stat" 2>/dev/null) ${ticks:-0}" >> "$dir/cpu"
    sleep 1
  done
  wait "$timer"
  python3 - "$dir" "$n" "$spec" <<'PY'
import glob, json, sys
d, n, spec = sys.argv[1], int(sys.argv[2]), sys.argv[3]
e, u, s, m = open(d + '/time').read().split()[-4:]
runs = glob.glob(d + '/results/*/result.json')
if not runs:
    print(f"{spec:<8} controller failed: " + open(d + '/err').read()[-300:].replace('\n', ' ')); sys.exit()
r = json.load(open(runs[0]))
lat, complete = [], 0
for line in open(glob.glob(d + '/results/*/intervals.ndjson')[0]):
    x = json.loads(line)
    if x['scope'] == 'cluster' and not x['amended']:
        lat.append((x['published_unix_ns'] - x['end_unix_ns']) / 1e6)
        complete += bool(x.get('complete'))
lat.sort()
# CPU while intervals were being published: between the first and the last cluster publication.
during = fleet_cores = float('nan')
try:
    pub = [json.loads(l)['published_unix_ns'] for l in open(glob.glob(d + '/results/*/intervals.ndjson')[0]) if '"scope":"cluster"' in l]
    samples = [tuple(map(int, l.split())) for l in open(d + '/cpu') if len(l.split()) == 3]
    inside = [s for s in samples if min(pub) <= s[0] <= max(pub)]
    if len(inside) >= 2:
        during = 100 * (inside[-1][1] - inside[0][1]) * 0.01 / ((inside[-1][0] - inside[0][0]) / 1e9)
        fleet_cores = (inside[-1][2] - inside[0][2]) * 0.01 / ((inside[-1][0] - inside[0][0]) / 1e9)
except (OSError, ValueError, IndexError):
    pass
# (Behind relays too an interval is complete when every worker's report is in: the relays say how
# many they carry and owe, and the controller waits for the late ones up to its grace.)
pct = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))] if lat else float('nan')
cluster = sum(int(dd.get('ops', 0)) for j in r['jobs'] for dd in j['directions'])
per_worker = sum(int(dd.get('ops', 0)) for j in r['jobs'] for w in j['workers'] for dd in w['directions'])
lost = int(r.get('workers_expected', n)) - int(r.get('workers_completed', 0))
if r.get('relayed_workers') and lost == 0:  # behind relays: the workers' own figures, as the relays summed them up
    per_worker = sum(int(w.get('ops', 0)) for w in r['relayed_workers'])
# Workers that stopped on their lease before the end (not lost: what they measured is in, the rest
# of their run is not): a controller or relay too slow to renew leases in time.
stopped = {w['worker'] for j in r['jobs'] for w in j['workers'] if w.get('stop_cause') == 'STOP_CAUSE_LEASE_EXPIRED'}
relays = {x for w in r.get('relayed_workers', []) for x in w.get('relays', [])}
stopped = len(stopped - relays) + sum(1 for w in r.get('relayed_workers', []) if w.get('stop_cause') == 'STOP_CAUSE_LEASE_EXPIRED')
print(f"{spec:<8} {100 * (float(u) + float(s)) / float(e):>5.1f}%     {during:>5.1f}%     {int(m) // 1024:>5} MB  {pct(0.5):>8.0f} ms  {pct(0.99):>8.0f} ms  "
      f"{100 * complete / max(len(lat), 1):>5.0f}%    "
      f"{int(r.get('start_skew_ns', 0)) / 1e6:>7.2f} ms  {int(r.get('late_starts', 0)):<6} {lost:<5} {stopped:<8} "
      f"{'yes' if cluster == per_worker else f'NO ({cluster} vs {per_worker})':<12} "
      f"{'' if fleet_cores != fleet_cores or spec.isdigit() else f'{fleet_cores:.2f} cores'}")
PY
  # Every worker, relay and simulator gone before the next N (a thousand take a while to exit):
  # TERM, then KILL.
  mine() { pgrep -f -- "--allow-root $dir" ; for p in "${fleet[@]}"; do kill -0 "$p" 2>/dev/null && echo "$p"; done; }
  kill $(mine) 2>/dev/null
  for _ in $(seq 1 300); do [ -z "$(mine)" ] && break; sleep 0.2; done
  kill -9 $(mine) 2>/dev/null
  for _ in $(seq 1 300); do [ -z "$(mine)" ] && break; sleep 0.2; done
  [ -n "${KEEP:-}" ] && echo "kept $dir" >&2 || rm -rf "$dir"
done
