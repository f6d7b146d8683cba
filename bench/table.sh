#!/usr/bin/env bash
# The README's performance-goals table: every row measured with its floor
# or peer in this one run (BenchmarkTable in mcpserver/). N calls per row
# (N=1 for a smoke run).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${N:-200}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
if ! go test -run '^$' -bench '^BenchmarkTable$' -benchtime "${n}x" -timeout 20m ./mcpserver/ >"$out" 2>&1; then
  cat "$out"
  exit 1
fi
if grep -q -- '--- SKIP' "$out"; then
  grep -A2 -- '--- SKIP' "$out"
  exit 1
fi
grep '^|' "$out"
# What one live session holds below the server: pids (threads included,
# what a pod's pids limit counts) and memory, per backend.
if ! go test -run '^$' -bench '^BenchmarkLiveSession$' -benchtime 1x -timeout 5m ./mcpserver/ >"$out" 2>&1; then
  cat "$out"
  exit 1
fi
echo
grep '^|' "$out"
# The soak: 32 HTTP sessions of mixed calls against a real `cordon serve
# --http` (cmd/cordon TestSoak), calls per second and latency.
soak=${SOAK:-30s}
if [ "$n" -le 1 ]; then soak=5s; fi
if ! CORDON_SOAK="$soak" CORDON_SOAK_SESSIONS=32 go test -count=1 -run '^TestSoak$' -v -timeout 10m ./cmd/cordon/ >"$out" 2>&1; then
  cat "$out"
  exit 1
fi
echo
grep -o '| [0-9]* HTTP sessions.*' "$out"
