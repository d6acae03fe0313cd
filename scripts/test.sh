#!/usr/bin/env bash
# Fresh machine to a full check: install, workspace constraints, build (with type checks), tests.
# Two tiers (docs/testing.md): the project's own tests, and the corpus tier, which runs when
# the corpora folder (../shared/corpora, or DOGU_CORPORA) is there. The SQL tier
# (`*.sql.spec.ts`) starts its own MariaDB server where `mariadbd` is installed, and says
# why it did not run where it is not; DOGU_REQUIRE_SQL=1 (CI) makes that a failure. The
# sandbox escape suite's unprivileged pass runs as nobody, or says why it did not run;
# DOGU_REQUIRE_UNPRIVILEGED=1 (CI) makes that a failure.
set -euo pipefail
# A relative DOGU_CORPORA means the caller's working directory, not the repository's.
if [[ -n ${DOGU_CORPORA:-} && $DOGU_CORPORA != /* ]]; then export DOGU_CORPORA="$PWD/$DOGU_CORPORA"; fi
cd "$(dirname "$0")/.."
source scripts/registry-env.sh
bash scripts/setup.sh
# DOGU_REQUIRE_CORPORA=1 (CI): a missing corpora folder fails here, before the long steps.
corpora_status=0
corpora_note="$(node scripts/corpora.mjs)" || corpora_status=$?
if (( corpora_status == 1 )); then
  echo "$corpora_note" >&2
  exit 1
fi
yarn constraints
yarn build
yarn typecheck
# The console's browser tests (packages/webui) fail, not skip, without Chromium: say so first.
if [[ ! -x ${DOGU_CHROMIUM:-/usr/lib/chromium/chromium} ]]; then
  echo "browser tests will fail: no Chromium at ${DOGU_CHROMIUM:-/usr/lib/chromium/chromium}. Install it with \`sudo apt-get install -y chromium\` (Debian/Ubuntu), or set DOGU_CHROMIUM to a Chromium binary." >&2
fi
# The bash tool's sandbox tests (packages/shell) fail, not skip, without bubblewrap.
if ! command -v bwrap >/dev/null; then
  echo "sandbox tests will fail: no bwrap on PATH. Install it with \`sudo apt-get install -y bubblewrap socat\` (Debian/Ubuntu)." >&2
fi
report="$(mktemp)"
trap 'rm -f "$report"' EXIT
status=0
yarn test --reporter=default --reporter=json --outputFile.json="$report" || status=$?
# One plain closing line, whatever the reporter printed above it. A file that failed to load
# (or whose hooks failed) has no failed test of its own: it counts as one failed test here.
node -e '
  const [file, corporaNote] = process.argv.slice(1)
  let r
  try {
    r = JSON.parse(require("fs").readFileSync(file, "utf8"))
  } catch {
    console.log("tests: no report (vitest did not finish)")
    process.exit(1)
  }
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
  console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests + broken.length} failed`)
  if (broken.length) process.exitCode = 1
' "$report" "$corpora_note" || status=1
exit "$status"
