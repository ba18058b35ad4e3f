#!/usr/bin/env bash
# Baselines for the workflows, one per scenario and profile: a run folder
# <results>/<scenario>-<profile>-<UTC time>/ (what `npx k6pack run` makes) is
# keyed by <scenario>-<profile>.
#
#   baseline.sh save RESULTS BASELINE
#       copy each run's summary.json to BASELINE/<key>/summary.json
#   baseline.sh compare BASELINE RESULTS TOLERANCE
#       `npx k6pack compare` each run with its baseline, Markdown on stdout;
#       exit 3 if any run regressed (1 if a file could not be read); runs with
#       no baseline yet are listed and pass
set -euo pipefail

key_of() { # results/ws-vs-http-lte-20260101T120000Z/summary.json -> ws-vs-http-lte
  local run
  run=$(basename "$(dirname "$1")")
  echo "${run%-*}"
}

runs() {
  shopt -s nullglob
  local found=("$1"/*/summary.json)
  if [ ${#found[@]} -eq 0 ]; then
    echo "baseline.sh: no run folder with a summary.json under $1" >&2
    exit 1
  fi
  printf '%s\n' "${found[@]}"
}

case "${1:-}" in
  save)
    [ $# -eq 3 ] || { echo "usage: $0 save RESULTS BASELINE" >&2; exit 2; }
    list=$(runs "$2")
    rm -rf "$3"
    while read -r summary; do
      mkdir -p "$3/$(key_of "$summary")"
      cp "$summary" "$3/$(key_of "$summary")/summary.json"
    done <<<"$list"
    ;;
  compare)
    [ $# -eq 4 ] || { echo "usage: $0 compare BASELINE RESULTS TOLERANCE" >&2; exit 2; }
    list=$(runs "$3")
    status=0
    while read -r summary; do
      key=$(key_of "$summary")
      if [ ! -f "$2/$key/summary.json" ]; then
        echo "- $key: no baseline yet, gated on its thresholds only"
        continue
      fi
      code=0
      # HISTORY (a history folder, `k6pack history`): latency judged against its spread.
      npx k6pack compare "$2/$key/summary.json" "$summary" --tolerance "$4" ${HISTORY:+--history "$HISTORY"} --markdown || code=$?
      if [ "$code" -ne 0 ] && [ "$status" -eq 0 ]; then status=$code; fi
    done <<<"$list"
    exit "$status"
    ;;
  *)
    echo "usage: $0 save RESULTS BASELINE | compare BASELINE RESULTS TOLERANCE" >&2
    exit 2
    ;;
esac
