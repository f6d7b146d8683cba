#!/usr/bin/env bash
# cordon's grep against ripgrep on the same 100k-file tree, side by side in
# one run. Installs ripgrep from Debian when missing (as root).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v rg >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    apt-get install -y -qq ripgrep >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq ripgrep >/dev/null; } ||
      echo "ripgrep could not be installed: no comparison" >&2
  else
    echo "install ripgrep for the comparison" >&2
  fi
fi
files=${FILES:-100000}
tree=$(mktemp -d /var/tmp/cordon-grep-XXXXXX)
trap 'rm -rf "$tree"' EXIT
echo "making $files files under $tree"
python3 - "$tree" "$files" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
line = "func handler(w http.ResponseWriter, r *http.Request) { return nil } // some code\n" * 20
for i in range(n):
    d = os.path.join(root, "pkg%03d" % (i // 1000), "mod%04d" % (i // 50))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%d.go" % (i % 50)), "w") as f:
        f.write(line + ("the needle is here\n" if i % 997 == 0 else ""))
PY
CORDON_BENCH_TREE=$tree go test -run '^$' -bench BenchmarkGrepTree -benchtime ${N:-5}x ./tools/ | grep -E '^Benchmark|ok'
