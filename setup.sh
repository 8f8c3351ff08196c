#!/usr/bin/env bash
# cpsim set-up: installs the Debian packages cpsim needs (when missing), builds, then runs a goal.
#   ./setup.sh run    -> build, then simulate scenarios/quickstart.yaml into out/quickstart/
#   ./setup.sh test   -> build, then run the whole test suite (ctest)
#   ./setup.sh build  -> build only
set -euo pipefail
cd "$(dirname "$0")"
goal=${1:-build}

packages=(build-essential cmake pkg-config libsimgrid-dev libboost-graph-dev libspdlog-dev libfmt-dev
          libyaml-cpp-dev catch2 libcli11-dev nlohmann-json3-dev zlib1g-dev libexpat1-dev python3 python3-matplotlib python3-pandas
          nodejs npm)
# The test goal also starts a private one-node Slurm (tests/cli/slurm_array.sh); running cpsim does not need it.
[ "$goal" = test ] && packages+=(slurm-wlm munge)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# nodejs/npm may come from outside Debian (a preinstalled node): accept a working `node` and `npm`.
if command -v node >/dev/null && command -v npm >/dev/null; then
  missing=("${missing[@]/nodejs}"); missing=("${missing[@]/npm}")
fi
missing=($(printf '%s\n' "${missing[@]}" | grep -v '^$' || true))
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)"

case "$goal" in
  build) ;;
  run)
    build/cpsim run scenarios/quickstart.yaml -o out/quickstart
    echo "outputs: out/quickstart/summary.json and out/quickstart/trace.json (open the trace at ui.perfetto.dev)" ;;
  test)
    (cd build && ctest --output-on-failure -j "$(nproc)") ;;
  *) echo "usage: ./setup.sh [build|run|test]" >&2; exit 2 ;;
esac
