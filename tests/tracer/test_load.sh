#!/bin/bash
# test_load.sh - nothing lost under load (issue 31): 16 threads
# allocating, growing and freeing as fast as they can (prog_mt) beside as
# many busy loops as there are CPUs, launched and attached (-p). heapsnoop
# makes the threads wait while it catches up (--on-full hold, the cgroup
# freezer: attach/hold.h), so every event is in and the live set is exact
# block by block: the 16,000 blocks kept, each of the size that names it,
# each from keep_alloc, nothing else of the threads'. The attached process
# is in heapsnoop's cgroup while traced and back in its own after; a
# heapsnoop killed by SIGKILL while the threads wait lets them go (its
# guard) and leaves no cgroup behind.
set -u
. "$(dirname "$0")/lib.sh"

NT=16 IT=50000
# The busy loops, as many as CPUs: lib.sh's trap ends them (jobs -p).
for _ in $(seq "$(nproc)"); do
	(while :; do :; done) &
done

# The sizes prog_mt keeps, sorted: 4096 + thread * 1000 + index.
awk -v nt=$NT 'BEGIN { for (t = 0; t < nt; t++) for (i = 0; i < 1000; i++)
	print 4096 + t * 1000 + i }' | sort -n > "$T/want"

# NAME RECORDS: the live set of the last dump, block by block: each block
# from keep_alloc at exactly the sizes wanted, no other block of the
# threads' (churn_alloc, churn_grow).
expect_kept() {
	"$HD" -s "$2" | awk '
		/^heapsnoop: / { on = 0 }
		/^heapsnoop: dump / { n = 0; delete size; delete fn }
		/^heapsnoop: live / { n++; on = 1; sub(/^[^~]*~b#size: /, ""); sub(/,.*/, "")
			size[n] = $0 }
		on && /^    #0 / { fn[n] = $3; sub(/\+.*/, "", fn[n]) }
		END { for (i = 1; i <= n; i++) print size[i], fn[i] }' > "$2.blocks"
	awk '$2 == "keep_alloc" { print $1 }' "$2.blocks" | sort -n > "$2.kept"
	expect_eq "$1: blocks from keep_alloc" "$(wc -l < "$2.kept")" $((NT * 1000))
	check "$1: each kept block at the size that names it, once" cmp -s "$2.kept" "$T/want"
	expect_eq "$1: no churned block live" \
		"$(awk '$2 ~ /^churn_/' "$2.blocks" | wc -l)" 0
}

# PID's cgroup v2 path, and where the cgroup2 hierarchy is mounted.
cgroup_of() { sed -n 's/^0:://p' "/proc/$1/cgroup"; }
mnt=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)

# Launched.
"$HS" -q -v -o "$T/launch" -- "$PROGS/prog_mt" $NT $IT 2> "$T/launch.err"
check "launched: exits 0" test $? -eq 0
check_no_loss "launched: no events lost" "$T/launch.err"
expect_kept "launched" "$T/launch"

# Attached: the process in heapsnoop's cgroup while traced, back after.
coproc M { exec "$PROGS/prog_mt" $NT $IT wait; }
wait_line "${M[0]}" '^ready ' || exit 1
pid=$M_PID
orig=$(cgroup_of "$pid")
mkfifo "$T/errpipe"
"$HS" -q -v -o "$T/attached" -p "$pid" 2> "$T/errpipe" &
hs=$!
exec 5< "$T/errpipe"
wait_line 5 "^heapsnoop: tracing pid $pid" "$T/attached.err" || exit 1
cat <&5 >> "$T/attached.err" &
drain=$!
check "-p: the process is in heapsnoop's cgroup, under its own" \
	bash -c "[[ '$(cgroup_of "$pid")' == '${orig%/}/heapsnoop-$hs' ]]"
echo go >&"${M[1]}"
wait_line "${M[0]}" '^done' || exit 1
# SIGINT ends the tracing with the last dump; the process lives on.
kill -INT "$hs"
wait "$hs"
check "-p: exits 0" test $? -eq 0
wait "$drain"
exec 5<&-
check_no_loss "-p: no events lost" "$T/attached.err"
expect_kept "-p" "$T/attached"
check "-p: the process is back in its cgroup" bash -c "[[ '$(cgroup_of "$pid")' == '$orig' ]]"
check "-p: heapsnoop's cgroup is gone" test ! -e "$mnt${orig%/}/heapsnoop-$hs"
echo bye >&"${M[1]}"
wait "$pid"
check "-p: the process exits 0" test $? -eq 0

# A heapsnoop killed while the threads wait: its guard lets them go and
# puts the process back. A ring of 1 MiB makes it hold them often; it is
# stopped while they are held (cgroup.events says frozen 1), then killed.
coproc K { exec "$PROGS/prog_mt" $NT $IT wait; }
wait_line "${K[0]}" '^ready ' || exit 1
pid=$K_PID
orig=$(cgroup_of "$pid")
mkfifo "$T/errpipe2"
"$HS" -q --ringbuf-size 1 -o /dev/null -p "$pid" 2> "$T/errpipe2" &
hs=$!
exec 6< "$T/errpipe2"
wait_line 6 "^heapsnoop: tracing pid $pid" "$T/killed.err" || exit 1
cat <&6 >> "$T/killed.err" &
dir=$mnt${orig%/}/heapsnoop-$hs
echo go >&"${K[1]}"
# Poll cgroup.events (its changes wake a poll: POLLPRI) until frozen, stop
# heapsnoop there; if it let them go meanwhile, go on and try again.
held=0
for _ in $(seq 50); do
	python3 - "$dir/cgroup.events" <<-'EOF' || break
	import select, sys
	f = open(sys.argv[1])
	p = select.poll()
	p.register(f, select.POLLPRI)
	while True:
	    f.seek(0)
	    if "frozen 1" in f.read():
	        sys.exit(0)
	    if not p.poll(60000):
	        sys.exit(1)
	EOF
	kill -STOP "$hs"
	if grep -qx 1 "$dir/cgroup.freeze"; then held=1; break; fi
	kill -CONT "$hs"
done
check "killed: heapsnoop was stopped while the threads were held" test $held -eq 1
kill -KILL "$hs"
wait "$hs" 2> /dev/null
went=0
wait_line "${K[0]}" '^done' && went=1
check "killed: the process went on to its end" test $went -eq 1
check "killed: the process is back in its cgroup" \
	bash -c "[[ '$(cgroup_of "$pid")' == '$orig' ]]"
check "killed: heapsnoop's cgroup is gone" test ! -e "$dir"
echo bye >&"${K[1]}"
wait "$pid"
check "killed: the process exits 0" test $? -eq 0

# No cgroup v2 to hold it in (a mount namespace without one): said, traced
# all the same by default; --on-full hold asked for refuses to run.
unshare -m sh -c '
	for m in $(awk '\''{ for (i = 1; i <= NF; i++) if ($i == "-" && $(i + 1) == "cgroup2") print $5 }'\'' /proc/self/mountinfo); do
		umount "$m" || exit 9
	done
	"$1" -q -o /dev/null -- true 2> "$2/nocg.err"; echo $? > "$2/nocg.rc"
	"$1" -q --on-full hold -o /dev/null -- true 2> "$2/nocghold.err"; echo $? > "$2/nocghold.rc"
' sh "$HS" "$T"
expect_eq "no cgroup v2: traced all the same" "$(cat "$T/nocg.rc")" 0
check "no cgroup v2: said, with what it means" grep -q "cannot make pid [0-9]* wait while heapsnoop catches up (no cgroup v2 hierarchy is mounted): under load, allocations are recorded as samples, as with --on-full sample" "$T/nocg.err"
expect_eq "no cgroup v2, --on-full hold: refused" "$(cat "$T/nocghold.rc")" 1
check "... and why" grep -q -- "--on-full hold: cannot make pid [0-9]* wait (no cgroup v2 hierarchy is mounted)" "$T/nocghold.err"
finish
