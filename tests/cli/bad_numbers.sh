#!/usr/bin/env bash
# Numbers out of range on the command line (issue: hardening, "Numbers: range, width, NaN"): every case must exit 2
# with exactly one line on stderr, the expected one (oracle: the documented limits, sim/scenario/input_limits.hpp and
# docs/robustness.md), and write nothing. Usage: bad_numbers.sh CPSIM SOURCE_DIR
set -u
cpsim=$1; src=$2
cd "$src"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
q=scenarios/quickstart.yaml
fail=0; n=0
check() {  # check "expected line" cpsim-args...
  local expected=$1; shift
  n=$((n + 1))
  (cd "$tmp" && "$cpsim" "$@" >/dev/null 2>"$tmp/err"); local rc=$?
  if [ $rc -ne 2 ]; then echo "FAIL $*: exit $rc, expected 2"; fail=1; fi
  if [ "$(wc -l <"$tmp/err")" -ne 1 ] || [ "$(cat "$tmp/err")" != "$expected" ]; then
    echo "FAIL $*:"; echo "  expected: $expected"; echo "  got:      $(cat "$tmp/err")"; fail=1
  fi
  if [ -e "$tmp/out" ]; then echo "FAIL $*: wrote $tmp/out"; fail=1; rm -rf "$tmp/out"; fi
}
Q="$src/$q"
check "--set:1:1: parallel.cp: must be at most 2147483647, got 4294967304" run "$Q" -o out --set parallel.cp=4294967304
check "--set:1:1: model.layers: must be at most 2147483647, got 2147483648" run "$Q" -o out --set model.layers=2147483648
check "--set:1:1: run.batch: must be at most 2147483647, got 2147483648" run "$Q" -o out --set run.batch=2147483648
check "--set:1:1: run.seq_len: must be at most 2147483648, got '8000000000000000'" run "$Q" -o out --set run.seq_len=8000000000000000
check "--set:1:1: parallel.ep_hot_share: expected a finite number, got 'nan'" run "$Q" -o out --set parallel.ep_hot_share=nan
check "--set:1:1: parallel.ep_capacity_factor: expected a finite number, got 'inf'" run "$Q" -o out --set parallel.ep_capacity_factor=inf
check "--set:1:1: platform.nvlink_bw: must be at most 1e+15, got '1e300GBps'" run "$Q" -o out --set platform.nvlink_bw=1e300GBps
check "--set:1:1: parallel.cp: empty value" run "$Q" -o out --set parallel.cp=
check "--set:1:1: platform.nodes: must be at most 65536, got 125000" validate "$Q" --set platform.nodes=125000
check "--seq-len:1:1: seq-len: must be at most 2147483648, got '9000000000000000'" volumes --seq-len 9000000000000000
check "--cp:1:1: cp: must be at most 2147483647, got '4294967304'" volumes --cp 4294967304
check "cpsim: usage: --bytes: Value -1 not in range 1.000000 to 1000000000000000.000000 (cpsim --help)" \
  engine-bench "$Q" --bytes -1
check "cpsim: usage: --flows: Value -1 not in range 1 to 100000000 (cpsim --help)" engine-bench "$Q" --flows -1
check "cpsim: usage: --jobs: Value abc not in range 1 to 4096 (cpsim --help)" sweep "$Q" -o out -j abc
check "cpsim: usage: --log-level: garbage not in {trace,debug,info,warn,error,off} (cpsim --help)" \
  --log-level garbage run "$Q" -o out
# Resources: a workload past its task limit is refused after its first layer, with the estimate (issue: hardening,
# "Resources are bounded and announced").
check "$Q:1:1: run.max_tasks: about 1.44e+08 tasks (144 in the first layer x 1000000 layers, ~42.92 GiB of memory), past the limit of 50000000 (run.max_tasks, or --max-tasks)" \
  run "$Q" -o out --set model.layers=1000000
check "$Q:1:1: run.max_tasks: the workload passed 100 tasks (run.max_tasks)" run "$Q" -o out --max-tasks 100
check "--set:1:1: .parallel: a key path is names joined by single dots, e.g. parallel.cp" run "$Q" -o out --set .parallel=1
echo "bad numbers: $n cases"
exit $fail
