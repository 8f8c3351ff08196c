#!/usr/bin/env bash
# The bundled quickstart writes summary.json and trace.json; running it twice gives byte-identical files; the
# trace passes both checkers of ../shared/tools/trace-check with exactly the slice, flow and counter-track counts
# cpsim reports in summary.json (oracle: cpsim's own accounting, checked by two independent parsers).
set -eu
cpsim=$1; src=$2; build=$3
cd "$src"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$cpsim" run scenarios/quickstart.yaml -o "$tmp/a" --set model.layers=4 2>/dev/null
"$cpsim" run scenarios/quickstart.yaml -o "$tmp/b" --set model.layers=4 2>/dev/null
test -s "$tmp/a/summary.json" && test -s "$tmp/a/trace.json"
cmp "$tmp/a/summary.json" "$tmp/b/summary.json"
cmp "$tmp/a/trace.json" "$tmp/b/trace.json"
if ls "$tmp/a" | grep -q tmp; then echo "FAIL: temporary files left"; exit 1; fi

py=/usr/bin/python3
$py "$build/trace-check/perfetto_json_lint.py" "$tmp/a/trace.json" --quiet > "$tmp/lint.json"
node "$build/trace-check/devtools_check.mjs" "$tmp/a/trace.json" > "$tmp/devtools.json"
$py - "$tmp/a/summary.json" "$tmp/lint.json" "$tmp/devtools.json" <<'PY'
import json, sys
summary, lint, dev = (json.load(open(p)) for p in sys.argv[1:4])
t = summary["trace"]
checks = {
    "lint errors": (lint["errors"], {}),
    "lint warnings": (lint["warnings"], {}),
    "lint slices": (lint["slices"], t["slices"]),
    "devtools slices": (dev["slices"], t["slices"]),
    "lint flows": (lint["flows_connected"], t["flows"]),
    "devtools flows": (dev["flows"], t["flows"]),
    "counter tracks": (lint["counter_tracks"], t["counter_tracks"]),
    "flows = simulated flows": (t["flows"], summary["flows"]),
}
bad = [f"{k}: {got} != {want}" for k, (got, want) in checks.items() if got != want]
print("\n".join(bad) or f"trace ok: {t['slices']} slices, {t['flows']} flows, {t['counter_tracks']} counter tracks")
sys.exit(1 if bad else 0)
PY
