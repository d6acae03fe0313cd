#!/usr/bin/env bash
# `.ci/with-playground-data.sh COMMAND…`: runs COMMAND (the README's test command) in a
# checkout where the playground has written its data, as a newcomer's has (issue 48), and
# fails if COMMAND changed a byte of it. First `bash scripts/start.sh` runs in a terminal (a
# tmux pane) and is typed the README's tour: `list`, a lookup, a note answered `a` (always),
# `grants`, `exit`; that leaves data/dogu/audit.jsonl, permissions.json, pending.json and
# data/workspace/. A data folder already there (DOGU_DATA, or data/) is used as it is,
# without the tour. Then a listing of every entry under it (type, mode, size, SHA-256) before
# and after COMMAND, which must match. The transcript and both listings go to test-results/;
# a line or two is printed here. Exits with COMMAND's status, or 1 if the data changed.
set -euo pipefail
cd "$(dirname "$0")/.."

data=${DOGU_DATA:-data}
results=test-results
mkdir -p "$results"
transcript=$results/playground.log
before=$results/playground-data.before
after=$results/playground-data.after

# Every entry under the folder, sorted: `d 755 - - dogu`, `f 644 123 <sha256> dogu/audit.jsonl`.
listing() {
  node - "$1" <<'EOF'
const { createHash } = require('node:crypto')
const { lstatSync, readdirSync, readFileSync, readlinkSync } = require('node:fs')
const { join } = require('node:path')
const root = process.argv[2]
const lines = []
const walk = (rel) => {
  for (const name of readdirSync(join(root, rel)).sort()) {
    const path = rel ? `${rel}/${name}` : name
    const stat = lstatSync(join(root, path))
    const mode = (stat.mode & 0o7777).toString(8)
    if (stat.isDirectory()) {
      lines.push(`d ${mode} - - ${path}`)
      walk(path)
    } else if (stat.isSymbolicLink()) lines.push(`l ${mode} - ${readlinkSync(join(root, path))} ${path}`)
    else lines.push(`f ${mode} ${stat.size} ${createHash('sha256').update(readFileSync(join(root, path))).digest('hex')} ${path}`)
  }
}
walk('')
console.log(lines.join('\n'))
EOF
}

# The README's tour in a real terminal: a tmux server of its own (its own socket and config),
# keys with send-keys, the screen read with capture-pane; each wait is bounded, the first
# one long enough for the first start's install and build.
socket="dogu-ci-$$"
pane=tour
tmux_() { tmux -L "$socket" "$@"; }
screen() { tmux_ capture-pane -p -J -S - -t "$pane"; }
# The pane's shell writes start.sh's exit status here as it ends: tmux may leave that shell a
# zombie for a while (pane_dead unset, no pane_dead_status), so the file says it ended.
status_file=$results/playground.status
dead() { [[ -s $status_file ]] || [[ $(tmux_ display-message -p -t "$pane" '#{pane_dead}') == 1 ]]; }
# What the pane showed, to the transcript, and its end here: the tour failed.
failed() {
  screen >"$transcript" || true
  echo "playground: $1; the screen's last lines (all of it in $transcript, stderr in $transcript.stderr):" >&2
  tail -n 30 "$transcript" >&2
  exit 1
}
# `until_shows REGEX SECONDS`: waits for a screen line to match (grep -E).
until_shows() {
  local deadline=$((SECONDS + $2))
  until screen | grep -Eq -- "$1"; do
    if dead || ((SECONDS > deadline)); then failed "it did not show /$1/"; fi
    sleep 0.5
  done
}
prompts() { screen | grep -c '^dogu> ' || true; }
send() { tmux_ send-keys -t "$pane" -l "$1" && tmux_ send-keys -t "$pane" Enter; }
# `type_line TEXT`: types a line and waits for the next prompt.
type_line() {
  local seen deadline=$((SECONDS + 60))
  seen=$(prompts)
  send "$1"
  until (($(prompts) > seen)); do
    if dead || ((SECONDS > deadline)); then failed "no prompt came back after \`$1\`"; fi
    sleep 0.2
  done
}
tour() {
  command -v tmux >/dev/null || { echo "playground: tmux is needed to type at the playground (sudo apt-get install -y tmux)" >&2; exit 1; }
  conf=$(mktemp)
  # The whole transcript stays in the scrollback, the first start's install and build too.
  echo 'set-option -g history-limit 100000' >"$conf"
  trap 'tmux_ kill-server 2>/dev/null || true; rm -f "$conf"' EXIT
  # No model: the tour's lines are commands, as a newcomer's are without DOGU_BASE_URL.
  tmux_ -f "$conf" new-session -d -s "$pane" -x 200 -y 50 \
    "env -u DOGU_BASE_URL -u DOGU_MODEL -u DOGU_API_KEY bash scripts/start.sh 2>>'$transcript.stderr'; echo \$? >'$status_file'" \; \
    set-option -t "$pane" remain-on-exit on
  until_shows '^dogu> ' 1200
  type_line 'list'
  type_line 'call lookup {"q":"France"}'
  # A write: it asks, and `a` grants it always (data/dogu/permissions.json).
  send 'call notes {"action":"add","text":"hi"}'
  until_shows '\[a\] always' 60
  type_line 'a'
  type_line 'grants'
  send 'exit'
  # Ended once its status is written. The bound is generous (a loaded CI machine); past it,
  # what still runs is listed to say why.
  local status='' deadline=$((SECONDS + 180))
  until [[ -s $status_file ]] && status=$(<"$status_file"); do
    if ((SECONDS > deadline)); then
      local pid
      pid=$(tmux_ display-message -p -t "$pane" '#{pane_pid}')
      echo "playground: still running 180 s after exit; its processes:" >&2
      ps -o pid,stat,etime,args --ppid "$pid" --pid "$pid" >&2 || true
      pgrep -P "$pid" | xargs -r -n1 ps -o pid,stat,etime,args --ppid >&2 || true
      failed "it still ran 180 s after exit"
    fi
    sleep 0.2
  done
  screen >"$transcript"
  [[ $status == 0 ]] || failed "it exited with status $status"
  tmux_ kill-server
}

: >"$transcript.stderr"
rm -f "$status_file"
if [[ -e $data ]]; then
  echo "playground: $data/ is already there; the suite runs with it as it is"
else
  started=$SECONDS
  tour
  echo "playground: bash scripts/start.sh, the README's tour typed in a terminal ($((SECONDS - started)) s; transcript $transcript)"
fi
[[ -d $data ]] || { echo "playground: left no $data/ folder (see $transcript)" >&2; exit 1; }
listing "$data" >"$before"
echo "playground: $data/ holds $(wc -l <"$before") entries ($(grep -c '^f ' "$before" || true) files); listing $before"

status=0
"$@" || status=$?

listing "$data" >"$after"
if ! changes=$(diff "$before" "$after"); then
  echo "playground data changed by \`$*\`: $data/ is not as the playground left it (< before, > after):"
  echo "$changes"
  exit 1
fi
echo "playground data: $data/ is byte for byte as the playground left it ($(wc -l <"$after") entries)"
exit "$status"
