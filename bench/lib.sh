# lib.sh - helpers of the benchmarks that time bench/workload.c (sourced by
# run.sh and unwind.sh; $T is the caller's scratch directory).

# The ns per call a workload run printed in FILE.
ns_of() { sed -n 's/^workload: .* \([0-9.]*\) ns per call$/\1/p' "$1"; }

# NAME COMMAND...: the best ns/call of 3 runs into $T/NAME; every run's
# standard error appended to $T/NAME.err.
best() {
	local b=
	for _ in 1 2 3; do
		"${@:2}" > "$T/run" 2>> "$T/$1.err"
		local v
		v=$(ns_of "$T/run")
		[ -n "$v" ] || { echo "bench: $1 printed no timing" >&2; cat "$T/$1.err" >&2; return 1; }
		b=$(awk -v a="$v" -v b="${b:-1e18}" 'BEGIN { print (a < b) ? a : b }')
	done
	echo "$b" > "$T/$1"
}
