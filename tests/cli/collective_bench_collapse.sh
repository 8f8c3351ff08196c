#!/usr/bin/env bash
# collective-bench simulates a platform-wide ring collective collapsed (one GPU per node-rotation orbit) when every
# GPU mirrors its representative. Oracle: the full simulation (run.fast_path=false) of the same chained
# collectives; makespan and represented flows must be equal to the last digit. A ring whose channels do not map
# onto each other under the rotation (4 channels on 8-GPU nodes) must be refused, and still give the full result.
set -eu
cpsim=$1; src=$2
cd "$src"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
bench() {  # tag, then extra args
  local tag=$1; shift
  "$cpsim" --log-level warn collective-bench bench/allgather-256.yaml --op allgather --bytes 268435456 --count 5 \
    --set platform.nodes=4 --set parallel.cp=4 "$@" > "$tmp/$tag.json"
}
bench collapsed
bench full --set run.fast_path=false
bench four_channels --set 'collectives={dp: {channels: 4}}'
bench four_channels_full --set 'collectives={dp: {channels: 4}}' --set run.fast_path=false
/usr/bin/python3 - "$tmp" <<'PY'
import json, os, sys
r = {t: json.load(open(os.path.join(sys.argv[1], t + ".json")))
     for t in ("collapsed", "full", "four_channels", "four_channels_full")}
c, f = r["collapsed"], r["full"]
assert c["collapsed"] == "one GPU per orbit of 8", c["collapsed"]
assert f["collapsed"].startswith("no: run.fast_path is off"), f["collapsed"]
assert c["makespan_s"] == f["makespan_s"], (c["makespan_s"], f["makespan_s"])  # exact, not close
assert c["flows"] == f["flows"] == 8 * c["flows_simulated"], (c["flows"], f["flows"], c["flows_simulated"])
q, qf = r["four_channels"], r["four_channels_full"]
assert q["collapsed"].startswith("no: GPU ") and q["collapsed"].count("rotated"), q["collapsed"]
assert q["flows_simulated"] == q["flows"] and q["makespan_s"] == qf["makespan_s"], (q, qf)
print(f"collapsed: {c['flows_simulated']} of {c['flows']} flows simulated, makespan {c['makespan_s']!r} s "
      f"(full {f['makespan_s']!r} s); 4 channels refused: {q['collapsed']}")
PY
