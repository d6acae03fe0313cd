#!/usr/bin/env bash
# Fresh machine to a full check: install, workspace constraints, build (with type checks), tests.
# Two tiers (docs/testing.md): the project's own tests, and the corpus tier, which runs when
# the corpora folder (../shared/corpora, or DOGU_CORPORA) is there. The SQL tier
# (`*.sql.spec.ts`) starts its own MariaDB server where `mariadbd` is installed, and says
# why it did not run where it is not; DOGU_REQUIRE_SQL=1 (CI) makes that a failure. The
# sandbox escape suite's unprivileged pass runs as nobody, or says why it did not run;
# DOGU_REQUIRE_UNPRIVILEGED=1 (CI) makes that a failure.
#
# Quiet when green (docs/testing.md, "Reading the output"): what each step and vitest print
# goes to test-results/test.log; here, one line per step, then each failure whole, the
# slowest files, the tiers and the closing count. A step that fails prints its output whole.
# DOGU_TEST_VERBOSE=1 prints everything here too.
set -euo pipefail
# A relative DOGU_CORPORA means the caller's working directory, not the repository's.
if [[ -n ${DOGU_CORPORA:-} && $DOGU_CORPORA != /* ]]; then export DOGU_CORPORA="$PWD/$DOGU_CORPORA"; fi
cd "$(dirname "$0")/.."
source scripts/registry-env.sh

results=test-results
log=$results/test.log
report=$results/vitest-report.json
typecheck_report=$results/typecheck-report.json
export DOGU_TEST_SUMMARY=$results/summary.txt
mkdir -p "$results"
rm -f "$report" "$typecheck_report" "$DOGU_TEST_SUMMARY"
: >"$log"
echo "full output: $log${DOGU_TEST_VERBOSE:+ (and here: DOGU_TEST_VERBOSE is set)}"

# `logged FILE COMMAND…`: appends what the command prints to FILE, without colour codes (and
# prints it here too with DOGU_TEST_VERBOSE=1, unless LOGGED_QUIET is set). Returns its status.
logged() {
  local file=$1 status=0
  shift
  if [[ ${DOGU_TEST_VERBOSE:-} == 1 && -z ${LOGGED_QUIET:-} ]]; then
    "$@" 2>&1 | perl -pe 'BEGIN { $| = 1 } s/\e\[[0-9;?]*[A-Za-z]//g' | tee -a "$file" || status=${PIPESTATUS[0]}
  else
    "$@" 2>&1 | perl -pe 'BEGIN { $| = 1 } s/\e\[[0-9;?]*[A-Za-z]//g' >>"$file" || status=${PIPESTATUS[0]}
  fi
  return "$status"
}

# `line NAME STATUS SECONDS`: a step's one line.
line() {
  if (($2)); then echo "$1: failed (exit $2, $3 s)"; else echo "$1: ok ($3 s)"; fi
}

# `failed NAME STATUS OUTPUT`: for a step that failed, its output (the file OUTPUT) whole,
# unless DOGU_TEST_VERBOSE=1 printed it already; then the script stops with its status.
failed() {
  if [[ ${DOGU_TEST_VERBOSE:-} == 1 ]]; then echo "$1: its output is above"; else echo "$1: its output:"; cat "$3"; fi
  exit "$2"
}

# `step NAME COMMAND…`: runs the command with its output in the log, then its one line.
step() {
  local name=$1 part started=$SECONDS status=0
  shift
  part=$(mktemp)
  echo "== $name: $*" >>"$log"
  logged "$part" "$@" || status=$?
  cat "$part" >>"$log"
  line "$name" "$status" "$((SECONDS - started))"
  if ((status)); then failed "$name" "$status" "$part"; fi
  rm -f "$part"
}

step install bash scripts/setup.sh
# DOGU_REQUIRE_CORPORA=1 (CI): a missing corpora folder fails here, before the long steps.
corpora_status=0
corpora_note="$(node scripts/corpora.mjs)" || corpora_status=$?
if (( corpora_status == 1 )); then
  echo "$corpora_note" >&2
  exit 1
fi
step constraints yarn constraints
# The type checks read the sources, not lib/: they run beside the build, which keeps one core
# busy. vitest's own type tests (`*.test-d.ts`, its typecheck mode) run with them, in a vitest
# of their own, and count in the closing line; the main run below leaves them out.
build_part=$(mktemp)
typecheck_part=$(mktemp)
started=$SECONDS
LOGGED_QUIET=1 logged "$typecheck_part" bash -c "yarn typecheck && yarn vitest run --typecheck.only --reporter=default --reporter=json --outputFile.json=$typecheck_report" &
typecheck_pid=$!
build_status=0
logged "$build_part" yarn build || build_status=$?
build_seconds=$((SECONDS - started))
typecheck_status=0
wait "$typecheck_pid" || typecheck_status=$?
typecheck_seconds=$((SECONDS - started))
{ echo "== build: yarn build"; cat "$build_part"; echo "== typecheck: yarn typecheck, then vitest's type tests"; cat "$typecheck_part"; } >>"$log"
if [[ ${DOGU_TEST_VERBOSE:-} == 1 ]]; then cat "$typecheck_part"; fi
line build "$build_status" "$build_seconds"
line typecheck "$typecheck_status" "$typecheck_seconds"
if ((build_status)); then failed build "$build_status" "$build_part"; fi
if ((typecheck_status)); then DOGU_TEST_VERBOSE='' failed typecheck "$typecheck_status" "$typecheck_part"; fi
rm -f "$build_part" "$typecheck_part"
# The console's browser tests (packages/webui) fail, not skip, without Chromium: say so first.
if [[ ! -x ${DOGU_CHROMIUM:-/usr/lib/chromium/chromium} ]]; then
  echo "browser tests will fail: no Chromium at ${DOGU_CHROMIUM:-/usr/lib/chromium/chromium}. Install it with \`sudo apt-get install -y chromium\` (Debian/Ubuntu), or set DOGU_CHROMIUM to a Chromium binary." >&2
fi
# The bash tool's sandbox tests (packages/shell) fail, not skip, without bubblewrap.
if ! command -v bwrap >/dev/null; then
  echo "sandbox tests will fail: no bwrap on PATH. Install it with \`sudo apt-get install -y bubblewrap socat\` (Debian/Ubuntu)." >&2
fi
status=0
started=$SECONDS
echo "== vitest: yarn test" >>"$log"
echo "vitest: running; its output goes to $log"
# The default reporter writes the whole account to the log; scripts/test-reporter.ts writes the
# failures and the slowest files to the summary printed below; the JSON report is read for the
# closing lines.
logged "$log" yarn test --typecheck.enabled=false --reporter=default --reporter=./scripts/test-reporter.ts --reporter=json --outputFile.json="$report" || status=$?
if ((status)); then echo "vitest: failed (exit $status, $((SECONDS - started)) s)"; else echo "vitest: ok ($((SECONDS - started)) s)"; fi
if [[ -f $DOGU_TEST_SUMMARY ]]; then
  if [[ -t 1 ]]; then cat "$DOGU_TEST_SUMMARY"; else perl -pe 's/\e\[[0-9;?]*[A-Za-z]//g' "$DOGU_TEST_SUMMARY"; fi
else
  # vitest ended before its reporters did (a crash, a signal): its last words.
  echo "vitest wrote no summary; the end of $log:"
  tail -n 40 "$log"
fi
# One plain closing line, whatever the reporter printed above it. A file that failed to load
# (or whose hooks failed) has no failed test of its own: it counts as one failed test here.
# vitest's type tests (the typecheck step's report) count in it too.
node -e '
  const [file, corporaNote, log, typecheckFile] = process.argv.slice(1)
  const read = (path) => JSON.parse(require("fs").readFileSync(path, "utf8"))
  let r
  try {
    r = read(file)
  } catch {
    console.log("tests: no report (vitest did not finish)")
    process.exit(1)
  }
  const types = read(typecheckFile)
  r.testResults.push(...types.testResults)
  r.numPassedTests += types.numPassedTests
  r.numFailedTests += types.numFailedTests
  const broken = r.testResults.filter((f) => f.status === "failed" && !f.assertionResults.some((a) => a.status === "failed"))
  for (const f of broken) console.log(`failed to run: ${require("path").relative(process.cwd(), f.name)}: ${(f.message || "").split("\n")[0]}`)
  const corpus = r.testResults.filter((f) => f.name.endsWith(".corpus.spec.ts")).length
  if (corpus) console.log(`${corporaNote.replace("corpus tier:", "corpus tier ran:")} (${corpus} files)`)
  else console.log(corporaNote.startsWith("corpus tier did not run") ? corporaNote : "corpus tier did not run: no corpus spec was collected")
  // A SQL spec that found no server has one test, named "sql tier did not run: <why>"; one
  // that ran names the server in its describe block ("MariaDB 10.11.19: …").
  const sql = r.testResults.filter((f) => f.name.endsWith(".sql.spec.ts"))
  const sqlTests = sql.flatMap((f) => f.assertionResults)
  const notRun = sqlTests.find((a) => a.title.startsWith("sql tier did not run"))
  if (!sqlTests.length || notRun) {
    console.log(notRun ? notRun.title : `sql tier did not run: ${sql.length ? "its spec ran no test" : "no sql spec was collected"}`)
    if (process.env.DOGU_REQUIRE_SQL === "1") process.exitCode = 1
  } else {
    const server = [...new Set(sqlTests.map((a) => (a.ancestorTitles[0] || "").split(":")[0]).filter(Boolean))].join(", ")
    console.log(`sql tier ran: ${server || "a SQL server"} (${sql.length} file${sql.length === 1 ? "" : "s"}, ${sqlTests.length} tests)`)
  }
  // The unprivileged pass of the escape suite: as nobody in a child vitest (as root), or in this
  // same process (as anyone else). One that cannot run has one test, named
  // "unprivileged pass did not run: <why>".
  const unprivileged = r.testResults.flatMap((f) => f.assertionResults).filter((a) => (a.ancestorTitles[0] || "").startsWith("sandbox escape suite (unprivileged"))
  const unprivilegedNotRun = unprivileged.find((a) => a.title.startsWith("unprivileged pass did not run"))
  if (!unprivileged.length || unprivilegedNotRun) {
    console.log(unprivilegedNotRun ? unprivilegedNotRun.title : "unprivileged pass did not run: the sandbox escape suite was not collected")
    if (process.env.DOGU_REQUIRE_UNPRIVILEGED === "1") process.exitCode = 1
  } else {
    const passed = unprivileged.filter((a) => a.status === "passed").length
    const as = unprivileged[0].ancestorTitles[0].includes("child vitest") ? "as nobody (uid 65534) in a child vitest" : `as uid ${process.getuid()} in the test process`
    console.log(`unprivileged pass ran: ${as} (${unprivileged.length} tests, ${passed} passed, ${unprivileged.length - passed} failed)`)
  }
  if (r.numFailedTests + broken.length) console.log(`the whole output: ${log}`)
  console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests + broken.length} failed`)
  if (broken.length) process.exitCode = 1
' "$report" "$corpora_note" "$log" "$typecheck_report" || status=1
exit "$status"
