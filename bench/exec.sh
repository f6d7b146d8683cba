#!/usr/bin/env bash
# Added latency of `cordon exec -- true` over a bare `true`, per backend.
# cordon exec is a fresh process each time, so its figure includes the
# start-up probe; the per-command cost inside a running server is
# BenchmarkConfineExecTrue in sandbox/.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=bin/cordon
[ -x "$bin" ] || make -s build
n=${N:-100}
ws=$(mktemp -d /var/tmp/cordon-bench-XXXXXX)
trap 'rm -rf "$ws"' EXIT

median_ms() { # median wall time of "$@" over $n runs, in ms
  local times=()
  for _ in $(seq "$n"); do
    local t0 t1
    t0=$(date +%s%N); "$@" >/dev/null 2>&1; t1=$(date +%s%N)
    times+=($(( (t1 - t0) / 1000 )))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]/1000}'
}

plain=$(median_ms true)
printf '%-32s %8s ms\n' "true" "$plain"
for backend in bwrap landlock; do
  m=$(median_ms "$bin" exec --workspace "$ws" --backend "$backend" -- true)
  printf '%-32s %8s ms  (+%s ms)\n' "cordon exec --backend $backend" "$m" "$(awk "BEGIN{print $m-$plain}")"
done
