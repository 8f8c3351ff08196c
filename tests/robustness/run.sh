#!/usr/bin/env bash
# Robustness checks run by CI after the README's test command:
#   1. the whole test suite again, built with AddressSanitizer + UndefinedBehaviorSanitizer (gcc);
#   2. a bounded libFuzzer run (clang) of the input readers: scenario YAML, `--set` overrides and XML platforms,
#      seeded with every scenario, bad scenario, model, override set and platform file.
# Usage: tests/robustness/run.sh [fuzz_seconds]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
fuzz_seconds=${1:-60}

need=()
for p in clang-14 libclang-rt-14-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if ((${#need[@]})); then
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

echo "== sanitizers: ASan + UBSan build of the test suite"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
cmake --build build-asan -j "$(nproc)" >/dev/null
# SimGrid itself is not instrumented; leaks inside it at exit are not ours to judge.
(cd build-asan && ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 ctest -j "$(nproc)" --output-on-failure)

echo "== fuzz: scenario, --set and XML platform readers for ${fuzz_seconds}s"
cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=OFF \
  -DCPSIM_FUZZ=ON >/dev/null
cmake --build build-fuzz --target scenario_fuzz -j "$(nproc)" >/dev/null
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus" "$work/findings"
cp scenarios/*.yaml tests/bad_scenarios/*.yaml models/*.yaml "$work/corpus/"
# 'S' + override lines, 'X' + an XML platform (tests/fuzz/scenario_fuzz.cpp reads the first byte).
i=0
for line in tests/cli/*.sh; do
  grep -o -- '--set [a-z_.]*=[^ "]*' "$line" | sed 's/^--set //' | sort -u | head -20 > "$work/sets" || true
  [ -s "$work/sets" ] && { printf 'S'; cat "$work/sets"; } > "$work/corpus/set-$((i++))"
done
for xml in platforms/*.xml tests/bad_platforms/*.xml; do
  { printf 'X'; cat "$xml"; } > "$work/corpus/xml-$(basename "$xml")"
done
if ! build-fuzz/scenario_fuzz "$work/corpus" -max_total_time="$fuzz_seconds" -max_len=8192 -timeout=10 \
     -print_final_stats=1 -artifact_prefix="$work/findings/" >"$work/log" 2>&1; then
  grep -v '^\[' "$work/log" | tail -40
  mkdir -p build-fuzz/findings && cp "$work"/findings/* build-fuzz/findings/ 2>/dev/null || true
  echo "robustness: the fuzzer found an input the loader mishandles (kept in build-fuzz/findings/)" >&2
  exit 1
fi
grep '^stat::' "$work/log"
echo "robustness: sanitizers and fuzzing passed"
