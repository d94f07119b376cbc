#!/usr/bin/env bash
# bench/history/series.sh OUT SEED AFTER_LATENCY_MS [RUNS] [CHANGE_AT]
# Twelve runs (RUNS) of one plan on the small lab, as a user following a platform would make them: a lab
# served with datastore lab-ds01's latency at 1 ms for runs 1..CHANGE_AT-1 (default 6), then a new lab with
# AFTER_LATENCY_MS for the rest (1.3 for "raised 30 %", 1 for "no change": the lab is restarted either way, so
# that the restart itself is in both). Each run is a vim25 storm of 8 linked clones; the run directories go to
# OUT/runs. Prints nothing but errors; `bootstorm history OUT/runs` reads them.
set -euo pipefail
out=$1 seed=$2 after=$3 runs=${4:-12} change_at=${5:-6}
B=${BOOTSTORM:-$(cd "$(dirname "$0")/../.." && pwd)/build/default/bootstorm}
mkdir -p "$out"
cat > "$out/plan.yaml" <<PLAN
apiVersion: bootstorm.io/v1
kind: StormPlan
name: nightly
platform: {kind: vsphere, endpoint: "lab:$out/lab", api: vim25}
golden: {vm: tiny-golden, clone: linked}
scenarios:
  - name: eight on two hosts
    placement: [{host: host-01, vms: 4}, {host: host-02, vms: 4}]
telemetry: {source: none}
output: $out/runs
PLAN
lab_pid=""
stop_lab() { if [ -n "$lab_pid" ]; then kill "$lab_pid" 2>/dev/null || true; wait "$lab_pid" 2>/dev/null || true; lab_pid=""; fi; }
trap stop_lab EXIT
start_lab() {  # LATENCY SEED
  stop_lab
  rm -rf "$out/lab"
  "$B" lab serve --lab small --state-dir "$out/lab" --seed "$2" --set "datastores.lab-ds01.latencyMs=$1" \
    >>"$out/lab.log" 2>&1 &
  lab_pid=$!
  for _ in $(seq 200); do [ -f "$out/lab/endpoints.json" ] && return 0; sleep 0.05; done
  echo "lab did not start; see $out/lab.log" >&2
  return 1
}
start_lab 1 "$seed"
for i in $(seq "$runs"); do
  [ "$i" -eq "$change_at" ] && start_lab "$after" "$((seed + 1000))"
  "$B" run "$out/plan.yaml" >>"$out/runs.log" 2>&1 || { echo "run $i failed; see $out/runs.log" >&2; exit 1; }
done
