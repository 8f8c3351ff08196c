#!/usr/bin/env bash
# Every tests/bad_scenarios/X.yaml must make `cpsim run` exit 2 with exactly the one line in X.expected
# (file:line:col: key.path: message) and leave no output behind; `cpsim validate` must refuse it with the same line
# (it sees everything run would die on). Oracle: the .expected files, written by hand
# review of each case. Usage: bad_scenarios.sh CPSIM SOURCE_DIR BUILD_DIR
set -u
cpsim=$1; src=$2
cd "$src"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0; n=0
for yaml in tests/bad_scenarios/*.yaml; do
  n=$((n + 1))
  expected="${yaml%.yaml}.expected"
  out="$tmp/out-$n"
  for command in run validate; do
    "$cpsim" --log-level error $command "$yaml" $([ $command = run ] && echo "-o $out") 2>"$tmp/err" >/dev/null; rc=$?
    if [ $rc -ne 2 ]; then echo "FAIL $yaml: $command exit code $rc, expected 2"; fail=1; fi
    if ! diff -u "$expected" "$tmp/err" >/dev/null; then
      echo "FAIL $yaml: $command message differs"; diff -u "$expected" "$tmp/err"; fail=1
    fi
  done
  if [ -e "$out" ]; then echo "FAIL $yaml: output folder $out was created"; fail=1; fi
done
echo "bad scenarios: $n cases"
[ $n -ge 10 ] || { echo "FAIL: corpus too small"; fail=1; }
exit $fail
