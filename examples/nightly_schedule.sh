#!/bin/sh
# A nightly schedule kept in a store: a tick at 02:30 London time starts one
# run of examples/nightly_report.lua, whatever the number of workers; a
# run still unfinished at the next tick makes that tick skip (the default
# overlap); after downtime the missed ticks of the last 6 hours still run.
# A worker runs the queued runs, each in a process of its own; had this
# host died mid-run, a worker elsewhere on the same store would take the
# run over once its lease ran out.
#
#   sh examples/nightly_schedule.sh [STORE]      (default: a new SQLite file in /tmp)
set -eu
store=${1:-sqlite:$(mktemp -d)/nightly.db}
cd "$(dirname "$0")"

lunar schedule add nightly --store "$store" --cron "30 2 * * *" --timezone Europe/London \
  --catchup 6h nightly_report.lua
lunar schedule ls --store "$store"
# Start a run now, outside the schedule's ticks: it is queued for a worker.
triggered=$(lunar schedule trigger nightly --store "$store")
# A submit with a key queues one run however often it is repeated.
keyed=$(lunar submit --store "$store" --key report-2026-12-02 nightly_report.lua 2026-12-02)
lunar submit --store "$store" --key report-2026-12-02 nightly_report.lua 2026-12-02 >/dev/null 2>&1
# One worker, two runs at a time, finding files in this folder.
lunar worker --store "$store" --runs 2 --root . &
worker=$!
lunar runs wait "$triggered" --store "$store"
lunar runs wait "$keyed" --store "$store"
kill -TERM "$worker"
wait "$worker"
lunar runs --store "$store"
lunar schedule pause nightly --store "$store"
lunar schedule rm nightly --store "$store"
