#!/bin/bash
# test_syswide.sh - heapsnoop -a: programs started after it, two at once and
# one that lives about a millisecond, each have their leaks reported under
# their own pid, exactly, and symbolized; a program in another mount
# namespace, using its own copy of the C library, is found and traced;
# --comm decided at a process's start, not by a later rename; 200
# short-lived processes in a row are all reported at their exit and leave
# nothing behind; with the ring buffer full, lost exits are counted and said.
# Its exact counts need a machine where no other process floods -a's ring
# (qemu guests running beside it did, at load 4): past a quarter of the
# ring -a sheds load by sampling (test_shed.sh), said on stderr, and the
# counts become estimates.
set -u
. "$(dirname "$0")/lib.sh"

# Start heapsnoop -a ARGS... writing $T/NAME.rec, its stderr readable on
# fd 5 (copied to $T/NAME.err); returns once it says it is tracing.
start_hs() { # NAME ARGS...
	local name=$1; shift
	mkfifo "$T/$name.errpipe"
	"$HS" -q -a "$@" > "$T/$name.rec" 2> "$T/$name.errpipe" &
	hs=$!
	exec 5< "$T/$name.errpipe"
	wait_line 5 '^heapsnoop: tracing all processes' "$T/$name.err"
}

# Stop it (SIGINT) and collect the rest of its stderr.
stop_hs() { # NAME [STATUS]: heapsnoop's exit status must be STATUS (0)
	kill -INT "$hs"
	cat <&5 >> "$T/$1.err"
	wait "$hs"
	local rc=$?
	check "$1: heapsnoop exits ${2:-0}" test "$rc" -eq "${2:-0}"
	[ "$rc" -eq "${2:-0}" ] || { echo "     (exit $rc; its last messages:)"; tail -n 5 "$T/$1.err"; }
	exec 5<&-
}

# Start PROG with its stdin on fd IN and stdout on fd OUT; its pid in $prog_pid.
start_prog() { # NAME IN OUT PROG...
	local name=$1 in=$2 out=$3; shift 3
	rm -f "$T/$name.in" "$T/$name.out"
	mkfifo "$T/$name.in" "$T/$name.out"
	"$@" < "$T/$name.in" > "$T/$name.out" &
	prog_pid=$!
	eval "exec $in> \"\$T/\$name.in\"; exec $out< \"\$T/\$name.out\""
}

# Records of one pid (and the dumps' first and last lines: heapdecode says
# a dump without its end-dump is cut), folded: bytes and counts.
fold_pid() { # RECORDS PID -> RECORDS.PID.{bytes,count}
	grep -E "pid=$2 |^heapsnoop: (end-)?dump " "$1" > "$1.$2"
	fold "$1.$2"
}

# 1. Three programs, two at the same time, one short-lived.
start_hs three --leaks-at-exit -s || exit 1
start_prog a 6 7 "$PROGS/prog_sys_a"; apid=$prog_pid
start_prog b 8 9 "$PROGS/prog_sys_b"; bpid=$prog_pid
wait_line 7 '^ready ' && wait_line 9 '^ready ' || exit 1
echo leak >&6; echo leak >&8
wait_line 7 '^done' && wait_line 9 '^done' || exit 1
"$PROGS/prog_sys_short" & spid=$!
wait "$spid"
stop_hs three
exec 6>&- 8>&-
wait "$apid" "$bpid"

fold_pid "$T/three.rec" "$apid"
expect_eq "a: bytes under its pid" "$(folded_sum "$T/three.rec.$apid.bytes" "main;sysa_leak")" 3000
expect_eq "a: count under its pid" "$(folded_sum "$T/three.rec.$apid.count" "main;sysa_leak")" 3
fold_pid "$T/three.rec" "$bpid"
expect_eq "b: calloc bytes" "$(folded_sum "$T/three.rec.$bpid.bytes" "main;sysb_calloc")" 10000
expect_eq "b: calloc count" "$(folded_sum "$T/three.rec.$bpid.count" "main;sysb_calloc")" 5
expect_eq "b: realloc bytes" "$(folded_sum "$T/three.rec.$bpid.bytes" "main;sysb_grow")" 8192
expect_eq "b: realloc count" "$(folded_sum "$T/three.rec.$bpid.count" "main;sysb_grow")" 2
fold_pid "$T/three.rec" "$spid"
expect_eq "short-lived: bytes at its exit" \
	"$(folded_sum "$T/three.rec.$spid.bytes" "main;short_leak")" 2100
expect_eq "short-lived: count at its exit" \
	"$(folded_sum "$T/three.rec.$spid.count" "main;short_leak")" 7
check "short-lived: exit section with its name" \
	grep -q "^heapsnoop: exit pid=$spid .* live=7 bytes=2100 comm=prog_sys_short$" "$T/three.rec"
check "short-lived: not in the final dump" \
	awk -v p="pid=$spid" '/^heapsnoop: dump /{d=1} d && index($0, p){exit 1}' "$T/three.rec"
check "a and b: still live in the final dump" \
	awk -v a="live pid=$apid " -v b="live pid=$bpid " \
		'/^heapsnoop: dump /{d=1} d && index($0, a){x=1} d && index($0, b){y=1} END{exit !(x && y)}' \
		"$T/three.rec"
check "summary: processes first, named, their live bytes in KiB (b's as the dump's)" \
	grep -Fq "    pid $bpid (prog_sys_b): $(human_size "$(awk '{t += $NF} END {print t}' "$T/three.rec.$bpid.bytes")") in " "$T/three.err"
check "summary: b's stacks symbolized" grep -q "sysb_calloc+0x" "$T/three.err"
check_no_loss "three: no events lost" "$T/three.err"
expect_eq "heapsnoop's own allocations never traced" "$(grep -c "pid=$hs " "$T/three.rec")" 0
check "heapdecode --report takes exit sections with the dump" \
	bash -c "'$HD' --report '$T/three.rec' | grep -q short_leak"
# Whole-run counts: each process its own peak and counts (--json).
"$HD" --json "$T/three.rec" > "$T/three.json"
expect_eq "each process its own peak, calls and stacks" "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
procs = {p["pid"]: p for p in d["processes"]}
out = []
for pid, fn in ((int(sys.argv[2]), "sysa_leak"), (int(sys.argv[3]), "sysb_calloc"),
                (int(sys.argv[4]), "short_leak")):
    st = [s for s in d["stacks"] if s["pid"] == pid]
    site = [s for s in st if s["frames"][0]["function"] == fn][0]
    p = procs[pid]
    out.append("%s:%d/%d/%d/%s" % (fn, site["allocations"], site["peak_bytes"],
        site["live_bytes"], p["allocations"] == sum(s["allocations"] for s in st)
        and p["peak_bytes"] >= site["peak_bytes"]))
print(" ".join(out))' "$T/three.json" "$apid" "$bpid" "$spid")" \
	"sysa_leak:3/3000/3000/True sysb_calloc:5/10000/10000/True short_leak:7/2100/2100/True"

# 2. Another mount namespace with its own copy of the C library.
libc=$(realpath "$(ldd "$PROGS/prog_sys_a" | awk '/libc\.so/ { print $3 }')")
cp "$libc" "$T/libc-copy"
start_hs ns || exit 1
start_prog ns 6 7 unshare -m --propagation private \
	sh -c 'mount --bind "$1" "$2" && exec "$3"' sh "$T/libc-copy" "$libc" "$PROGS/prog_sys_a"
wait_line 7 '^ready ' "$T/ns.ready" || exit 1
nspid=$(sed -n 's/^ready //p' "$T/ns.ready")
wait_line 5 "^heapsnoop: probing .* first seen in pid [0-9]+" "$T/ns.err" || exit 1
echo leak >&6
wait_line 7 '^done' || exit 1
stop_hs ns
ino=$(stat -c %i "$T/libc-copy")
check "ns: the copy (inode $ino) was probed" grep -q "inode $ino, first seen in pid $nspid)" "$T/ns.err"
fold_pid "$T/ns.rec" "$nspid"
expect_eq "ns: leaks under its pid" "$(folded_sum "$T/ns.rec.$nspid.bytes" "main;sysa_leak")" 3000
expect_eq "ns: count" "$(folded_sum "$T/ns.rec.$nspid.count" "main;sysa_leak")" 3
exec 6>&- 7<&-
wait

# 3. Filters: by name, by size, by pid, by user.
# b runs as "${B_AS[@]}" "$PROGS/prog_sys_b".
B_AS=()
run_pair() { # NAME HEAPSNOOP_ARGS... : a and b each leak once while traced
	local name=$1; shift
	start_prog a 6 7 "$PROGS/prog_sys_a"; apid=$prog_pid
	start_prog b 8 9 "${B_AS[@]}" "$PROGS/prog_sys_b"; bpid=$prog_pid
	wait_line 7 '^ready ' && wait_line 9 '^ready ' || return 1
	start_hs "$name" "${@//@APID@/$apid}" || return 1
	echo leak >&6; echo leak >&8
	wait_line 7 '^done' && wait_line 9 '^done' || return 1
	stop_hs "$name"
	exec 6>&- 8>&- 7<&- 9<&-
	wait "$apid" "$bpid"
	rm -f "$T"/a.in "$T"/a.out "$T"/b.in "$T"/b.out
	fold "$T/$name.rec"
}
run_pair comm --comm prog_sys_a || exit 1
expect_eq "--comm: the process named" "$(folded_sum "$T/comm.rec.bytes" "main;sysa_leak")" 3000
expect_eq "--comm: not the other" "$(grep -c "pid=$bpid " "$T/comm.rec")" 0
# --comm is decided when a process starts or execs: one that renames itself
# later stays traced, frees included; one that takes the name later is not.
cp "$PROGS/prog_sys_a" "$T/other_name"
start_hs rename --comm prog_sys_a || exit 1
start_prog a 6 7 "$PROGS/prog_sys_a"; apid=$prog_pid
start_prog b 8 9 "$T/other_name"; bpid=$prog_pid
wait_line 7 '^ready ' && wait_line 9 '^ready ' || exit 1
for cmd in leak "rename worker" free leak leak; do
	echo "$cmd" >&6; wait_line 7 '^done' || exit 1
done
for cmd in "rename prog_sys_a" leak; do
	echo "$cmd" >&8; wait_line 9 '^done' || exit 1
done
stop_hs rename
exec 6>&- 7<&- 8>&- 9<&-
wait "$apid" "$bpid"
rm -f "$T"/a.in "$T"/a.out "$T"/b.in "$T"/b.out
fold "$T/rename.rec"
expect_eq "--comm, renamed later: its frees and later leaks seen" \
	"$(folded_sum "$T/rename.rec.count" "main;sysa_leak")" 6
expect_eq "--comm, named later: not traced" "$(grep -c "pid=$bpid " "$T/rename.rec")" 0
run_pair size --min-size 1500 --max-size 3000 || exit 1
expect_eq "--min-size: smaller not traced" "$(folded_sum "$T/size.rec.count" "main;sysa_leak")" 0
expect_eq "sizes in range traced" "$(folded_sum "$T/size.rec.bytes" "main;sysb_calloc")" 10000
expect_eq "--max-size: larger not traced" "$(folded_sum "$T/size.rec.count" "main;sysb_grow")" 0
run_pair pids --pid-filter @APID@ || exit 1
expect_eq "--pid-filter: the pid given" "$(folded_sum "$T/pids.rec.bytes" "main;sysa_leak")" 3000
expect_eq "--pid-filter: no other" "$(grep -c "pid=$bpid " "$T/pids.rec")" 0
B_AS=(setpriv --reuid=65534 --regid=65534 --clear-groups)
run_pair uid --uid 65534 || exit 1
expect_eq "--uid: the user's process" "$(folded_sum "$T/uid.rec.bytes" "main;sysb_calloc")" 10000
expect_eq "--uid: not root's" "$(grep -c "pid=$apid " "$T/uid.rec")" 0

# 4. 200 short-lived processes in a row.
start_hs many --leaks-at-exit || exit 1
: > "$T/pids"
for i in $(seq 200); do
	"$PROGS/prog_sys_short" & echo $! >> "$T/pids"; wait $!
done
stop_hs many
expect_eq "200 processes: each reported at its exit" \
	"$(grep -c '^heapsnoop: exit pid=[0-9]* .* live=7 bytes=2100 comm=prog_sys_short$' "$T/many.rec")" 200
expect_eq "200 processes: every pid" \
	"$(grep -o '^heapsnoop: exit pid=[0-9]*' "$T/many.rec" | sed 's/.*=//' | grep -cxFf "$T/pids")" 200
fold "$T/many.rec"
expect_eq "200 processes: bytes" "$(folded_sum "$T/many.rec.bytes" "main;short_leak")" 420000
check "200 processes: none left in the tables" \
	awk '/^heapsnoop: dump /{d=1} d && /prog_sys_short/{exit 1}' "$T/many.rec"
check_no_loss "200 processes: no events lost" "$T/many.err"
check "200 processes: no mapping records lost" bash -c "! grep -q 'MAPPING RECORDS LOST' '$T/many.err'"

# 5. A full ring buffer: the consumer is stopped while a burst fills it and
# short-lived processes start and end; their lost exits are counted and said.
start_hs full --ringbuf-size 1 || exit 1
start_prog w 6 7 "$PROGS/prog_waiter"
wait_line 7 '^ready ' || exit 1
kill -STOP "$hs"
echo "burst 200000" >&6
wait_line 7 '^done' || exit 1
for i in 1 2 3 4 5; do "$PROGS/prog_sys_short"; done
kill -CONT "$hs"
stop_hs full 3	# events were lost
exec 6>&- 7<&-
wait
check "full: lost exits said plainly" \
	grep -Eq "^heapsnoop: EVENTS LOST: .* [1-9][0-9]* process exits or execs dropped" "$T/full.err"
check "full: the advice names --ringbuf-size" grep -q -- "--ringbuf-size" "$T/full.err"
finish
