#!/usr/bin/env bash
# The README's `npm test` exactly as a newcomer types it: a fresh clone of this checkout's last
# commit, a fresh HOME, the machine's own Node first on PATH and none of our variables set (no
# TEST_DATABASE_URL, REDIS_URL or CI): the embedded database, the tests that need a server
# skipping with their one line. Prints the run's summary line and how long `npm test` took (the
# whole of it: the install of Node, pnpm and the packages first, then the suite); exits as it did.
#
#   bash scripts/newcomer-test.sh [NODE]    NODE: the Node to put first (default: the machine's)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
node_bin=${1:-}
if [ -z "$node_bin" ]; then
  if [ -x /usr/bin/node ]; then node_bin=/usr/bin/node; else node_bin=$(command -v node); fi
fi
path="$(dirname "$node_bin"):/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone -q "$root" "$work/clone"
mkdir "$work/home"
echo "fresh clone in $work/clone, HOME=$work/home, node $("$node_bin" --version), nothing else set"

status=0
started=$(date +%s)
(cd "$work/clone" && env -i HOME="$work/home" PATH="$path" LANG=C.UTF-8 TERM=dumb npm test) || status=$?
seconds=$(($(date +%s) - started))

results="$work/clone/artifacts/test-results.json"
if [ -f "$results" ]; then
  "$node_bin" -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const skipped = r.numPendingTests + r.numTodoTests;
    const ended = Math.max(...r.testResults.map((t) => t.endTime));
    console.log(`newcomer: ${r.numPassedTests} passed, ${r.numFailedTests} failed` + (skipped ? `, ${skipped} skipped` : ""));
    console.log(`newcomer: the suite ran ${Math.round((ended - r.startTime) / 1000)} s`);
  ' "$results"
  mkdir -p "$root/artifacts"
  cp "$results" "$root/artifacts/newcomer-test-results.json"
else
  echo "newcomer: npm test wrote no results" >&2
fi
echo "newcomer: npm test took ${seconds} s ($((seconds / 60)) min $((seconds % 60)) s), install included"
exit "$status"
