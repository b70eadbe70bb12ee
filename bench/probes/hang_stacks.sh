#!/usr/bin/env bash
# Where a hanging job waits: runs COMMAND in the background, and after SECONDS prints every
# thread of every process whose name matches PATTERN (the process name, as pgrep -x): its name, kernel wait channel, system
# call, and (where gdb is installed) its user stack. Then ends the command.
# usage: bench/probes/hang_stacks.sh SECONDS PATTERN COMMAND [ARGS...]
set -u
secs=$1 pat=$2; shift 2
"$@" &
job=$!
sleep "$secs"
# a user stack: gdb, or eu-stack (elfutils; .deps/estack may carry one with its libelf/libdw)
st=
if command -v gdb >/dev/null; then st="gdb"
elif command -v eu-stack >/dev/null; then st="eu-stack"
elif [ -x .deps/estack/eu-stack ]; then st="env LD_LIBRARY_PATH=.deps/estack/lib .deps/estack/eu-stack"; fi
echo "== hang_stacks after ${secs} s (stacks: ${st:-none}) =="
for p in $(pgrep -x "$pat"); do
  [ "$p" = "$$" ] && continue
  echo "-- pid $p: $(tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null | cut -c1-120)"
  for t in /proc/$p/task/*; do
    echo "   tid ${t##*/} $(cat $t/comm 2>/dev/null) wchan=$(cat $t/wchan 2>/dev/null) syscall=$(cut -d' ' -f1 $t/syscall 2>/dev/null)"
  done
  case "$st" in
    gdb) timeout 60 gdb -q -batch -p "$p" -ex 'thread apply all bt 16' 2>/dev/null | grep -E '^Thread|^#' | head -150 ;;
    "") ;;
    *) timeout 60 $st -p "$p" -n 16 2>&1 | head -150 ;;
  esac
done
kill -- "$job" 2>/dev/null; sleep 5; kill -9 "$job" 2>/dev/null; wait "$job" 2>/dev/null
