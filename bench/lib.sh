# lib.sh - helpers of the benchmarks that time bench/workload.c (sourced by
# run.sh, unwind.sh, collector.sh, kfeatures.sh, progcost.sh and the
# interpreter benches; $T is the caller's scratch directory).

# The ns per call a workload run printed in FILE.
ns_of() { sed -n 's/^workload: .* \([0-9.]*\) ns per call$/\1/p' "$1"; }

# NAME COMMAND...: one more run of NAME; the best ns/call of NAME's runs
# so far into $T/NAME, the run's standard error appended to $T/NAME.err.
# Called round after round, modes in turn, it compares modes under the
# same conditions.
once() {
	"${@:2}" > "$T/run" 2>> "$T/$1.err"
	local v
	v=$(ns_of "$T/run")
	[ -n "$v" ] || { echo "bench: $1 printed no timing" >&2; cat "$T/$1.err" >&2; return 1; }
	awk -v a="$v" -v b="$(cat "$T/$1" 2>/dev/null || echo 1e18)" \
		'BEGIN { print (a < b) ? a : b }' > "$T/$1.new" && mv "$T/$1.new" "$T/$1"
}

# NAME COMMAND...: the best ns/call of 3 runs in a row into $T/NAME.
best() {
	rm -f "$T/$1"
	for _ in 1 2 3; do
		once "$@" || return 1
	done
}

# One run of the workload $WL ($N_SLOW calls) under memleak-bpfcc -p, its
# output in $T/memleak.out.
memleak_run() {
	coproc WLP { exec "$WL" "$N_SLOW" --wait-free-probe; }
	local line pid=$WLP_PID
	read -r line <&"${WLP[0]}"
	memleak-bpfcc -p "$pid" 1000 > "$T/memleak.out" 2>&1 &
	local ml=$!
	cat <&"${WLP[0]}"
	wait "$pid" 2> /dev/null || true
	# A background job of a script ignores SIGINT: stop memleak with SIGTERM.
	kill -TERM "$ml" 2> /dev/null; wait "$ml" 2> /dev/null || true
}

# bcc compiles against kernel headers; this kernel ships none, so merge
# Debian's -common and -amd64 header trees into OUT/kheaders (once) and
# point BCC_KERNEL_SOURCE there.
bcc_headers() { # OUT
	local kh=$1/kheaders common arch
	if [ ! -e "$kh/.done" ]; then
		rm -rf "$kh" && mkdir -p "$kh"
		common=$(ls -d /usr/src/linux-headers-*-common | sort -V | tail -1)
		arch=$(ls -d /usr/src/linux-headers-*-amd64 | sort -V | tail -1)
		cp -a "$common"/. "$kh"/ && cp -a "$arch"/. "$kh"/ && touch "$kh/.done"
	fi
	export BCC_KERNEL_SOURCE=$PWD/$kh
}

# PID: "name run_cnt run_time_ns" of each BPF program process PID holds:
# its ids from /proc/PID/fdinfo (this bpftool lists no owning pids), the
# figures from bpftool prog show (kernel.bpf_stats_enabled=1).
prog_stats() {
	local ids
	ids=$(grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{ print $2 }' | sort -u)
	bpftool -j prog show | python3 -c '
import json, sys
ids = set(int(i) for i in sys.argv[1].split())
for p in json.load(sys.stdin):
	if p["id"] in ids:
		print(p["name"], p.get("run_cnt", 0), p.get("run_time_ns", 0))
' "$ids"
}
