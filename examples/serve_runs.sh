#!/bin/sh
# Runs in a store, as web pages: two runs of the nightly report are
# recorded, then `lunar serve` shows them at a URL on this machine (the
# runs, newest first; each run's graph, timeline and steps with their
# outputs and errors; Resume and Rerun buttons unless --read-only).
# Loopback only: listening anywhere else needs --token.
#
#   sh examples/serve_runs.sh [STORE]           (open the URL it prints; Ctrl-C stops)
#   sh examples/serve_runs.sh STORE --check     (fetches the runs page once, then stops)
set -eu
store=${1:-sqlite:$(mktemp -d)/serve.db}
cd "$(dirname "$0")"

lunar run --store "$store" nightly_report.lua 2026-12-01 >/dev/null
lunar run --store "$store" nightly_report.lua 2026-12-02 >/dev/null
if [ "${2:-}" != "--check" ]; then
  exec lunar serve --store "$store" --read-only
fi
# Any free port; the URL is the first line lunar serve prints.
out=$(mktemp)
lunar serve --store "$store" --read-only --listen 127.0.0.1:0 >"$out" &
server=$!
while ! grep -q "http://" "$out"; do sleep 0.05; done
url=$(sed -n 's/^lunar serve: \(http:[^ ]*\).*/\1/p' "$out")
python3 -c 'import sys, urllib.request; page = urllib.request.urlopen(sys.argv[1]).read().decode(); print(page[page.index("<title>") + 7:page.index("</title>")]); print(page.count("/runs/"), "runs")' "$url"
# The newest run's page: its step graph (drawn when Graphviz's dot is installed).
python3 -c 'import sys, urllib.request; page = urllib.request.urlopen(sys.argv[1] + "runs/2").read().decode(); print("graph drawn" if "class=\"run-graph\"" in page else "no graph (dot missing)")' "$url"
kill -INT "$server"
wait "$server"
rm -f "$out"
