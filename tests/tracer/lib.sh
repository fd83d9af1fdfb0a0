# lib.sh - helpers for the tracer tests (sourced). Tests wait on lines the
# programs print, never on sleeps; the timeouts below only stop a test
# that would otherwise hang, and then it fails.
OUT=$(realpath "${1:?usage: $0 BUILD_DIR}")
HS=$OUT/heapsnoop
HD=$OUT/heapdecode
PROGS=$OUT/tests
T=$(mktemp -d)
trap 'rm -rf "$T"; jobs -p | xargs -r kill 2>/dev/null' EXIT
fails=0

# BYTES as the human reports write a size (text.h's text_size): "N bytes"
# below 1 KiB, else 1024-based with one decimal, "4.0 KiB", "1.2 MiB".
human_size() { # BYTES
	awk -v b="$1" 'BEGIN { split("KiB MiB GiB TiB", u, " "); if (b < 1024) { printf "%d bytes", b; exit }
		for (i = 0; b >= 1024 && i < 4; i++) b /= 1024; printf "%.1f %s", b, u[i] }'
}

check() { # NAME COMMAND... : run a check and say ok/FAIL
	local name=$1; shift
	if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi
}

# Sum of VALUEs of folded lines whose stack ends with ";SUFFIX" (or is it).
folded_sum() { # FILE SUFFIX
	awk -v suf="$2" '{
		v = $NF; s = substr($0, 1, length($0) - length(v) - 1)
		if (s == suf || substr(s, length(s) - length(suf)) == ";" suf) t += v
	} END { print t + 0 }' "$1"
}

expect_eq() { # NAME GOT WANT (an empty GOT never passes)
	if [ -n "$2" ] && [ "$2" = "$3" ]; then echo "ok   $1 ($2)"; else
		echo "FAIL $1: got '$2', want '$3'"; fails=$((fails + 1)); fi
}

# Sampling by bytes (--sample-bytes MEAN): COUNT live blocks of SIZE bytes
# are estimated as SIZE * COUNT bytes and COUNT blocks; each is kept with
# p = 1 - exp(-SIZE/MEAN) and counts SIZE/p bytes and 1/p blocks
# (heapdecode), so the estimates' standard deviations are
# sqrt(COUNT * SIZE^2 * (1 - p) / p) and sqrt(COUNT * (1 - p) / p). GOT
# must be within 4 of them (UNIT: 1 for blocks, else bytes).
expect_estimate() { # NAME GOT SIZE COUNT MEAN [UNIT]
	local r
	# busybox's awk may be built without exp() and sqrt() (the arm64 guest).
	if ! awk 'BEGIN { exit !(exp(0) == 1) }' 2> /dev/null; then
		echo "skip $1 ($2): this awk has no exp()"
		return
	fi
	r=$(awk -v g="$2" -v s="$3" -v n="$4" -v m="$5" -v u="${6:-$3}" 'BEGIN {
		p = 1 - exp(-s / m); w = u * n; sd = sqrt(n * u * u * (1 - p) / p)
		printf "%s %d %d", (g != "" && (g - w) ^ 2 <= 16 * sd * sd) ? "ok" : "no", w, sd }')
	if [ "${r%% *}" = ok ]; then echo "ok   $1 ($2, want ${r#* } sd)"; else
		echo "FAIL $1: got '$2', want ${r#* } sd, within 4 sd"; fails=$((fails + 1)); fi
}

# tests/collector/prog_collect's "sample COUNT" case under --sample-bytes
# MEAN in RECORDS, folded into RECORDS.bytes/.count: COUNT x 64 and
# COUNT/64 x 8192 bytes live (as many again freed). The dump says its
# mean; each stack's estimated bytes and blocks are within 4 standard
# deviations; only a few of the small blocks have a record, each with its
# real size; heapdecode says the values are estimates.
expect_sampled() { # RECORDS COUNT MEAN
	local n
	check "sampling: the dump says its mean" grep -q "^heapsnoop: dump .* sample-bytes=$3\$" "$1"
	expect_estimate "sampling: estimated live bytes of 64-byte blocks" \
		"$(folded_sum "$1.bytes" "case_sample;sample_small")" 64 "$2" "$3"
	expect_estimate "sampling: estimated live bytes of 8 KiB blocks" \
		"$(folded_sum "$1.bytes" "case_sample;sample_big")" 8192 $(($2 / 64)) "$3"
	expect_estimate "sampling: estimated live 64-byte blocks" \
		"$(folded_sum "$1.count" "case_sample;sample_small")" 64 "$2" "$3" 1
	expect_estimate "sampling: estimated live 8 KiB blocks" \
		"$(folded_sum "$1.count" "case_sample;sample_big")" 8192 $(($2 / 64)) "$3" 1
	n=$("$HD" -s "$1" 2> /dev/null | grep -c '^heapsnoop: live .*~b#size: 64,')
	check "sampling: a few of the $2 64-byte blocks recorded, as 64 bytes ($n)" \
		test "$n" -gt 0 -a "$n" -lt $(($2 / 16))
	check "sampling: --report says its values are estimates" \
		bash -c "'$HD' --report '$1' | grep -q '^total (estimated, +-[0-9]* bytes at 95%): '"
	check "sampling: -s says what each block stands for" \
		bash -c "'$HD' -s '$1' | grep -q '^    (sampled: stands for [0-9]* bytes in [0-9.]* allocations, estimated)$'"
}

# prog_semantics' live set, folded into RECORDS.bytes/.count: every
# allocator rule gives the live bytes and count it should, from the right
# stack (test_semantics.sh; the preload's test_preload.sh).
expect_semantics() { # RECORDS
	local f b c
	while read -r f b c; do
		expect_eq "$f: live bytes" "$(folded_sum "$1.bytes" "main;$f")" "$b"
		expect_eq "$f: live count" "$(folded_sum "$1.count" "main;$f")" "$c"
	done <<-EOF
	case_malloc_leak 300 3
	case_freed 0 0
	case_realloc_null 111 1
	case_realloc_zero;src_realloc_zero 0 0
	case_realloc_zero 0 0
	case_realloc_fail;src_realloc_fail 333 1
	case_realloc_fail 0 0
	case_realloc_grow 5000 1
	case_realloc_grow;src_realloc_grow 0 0
	case_calloc 63 1
	case_calloc_overflow 0 0
	case_malloc_fail 0 0
	case_posix_memalign 444 1
	case_posix_memalign_fail 0 0
	case_aligned_alloc 512 1
	case_memalign 96 1
	case_valloc 123 1
	case_pvalloc 321 1
	case_reallocarray 200 1
	case_reallocarray_fail;src_reallocarray_fail 55 1
	case_reallocarray_fail 0 0
	EOF
	# Nothing else of the program's own is live (its functions are all case_*).
	expect_eq "no other live stacks through main" \
		"$(grep ';main' "$1.bytes" | grep -vc ';case_')" 0
}

# Read lines from file descriptor FD until one matches REGEX (timeout 60 s
# a line, or HS_TEST_TIMEOUT seconds: the kernel matrix raises it for qemu
# without KVM, tests/kmatrix).
# A program started in the background (pid BG) writing $T/NAME.fifo says
# "ready PID" when PID should die: its lines copied to $T/NAME.out, then
# PID killed by signal KSIG (9), and BG waited for.
kill_at_ready() { # NAME BG
	local line
	exec 9< "$T/$1.fifo"
	wait_line 9 '^ready [0-9]+$' "$T/$1.out"
	line=$(tail -n 1 "$T/$1.out")
	kill -"${KSIG:-9}" "${line#ready }"
	exec 9<&-
	wait "$2"
}

wait_line() { # FD REGEX [COPY_TO]
	local line rc
	while IFS= read -r -t "${HS_TEST_TIMEOUT:-60}" line <&"$1"; rc=$?; [ "$rc" -eq 0 ]; do
		[ -n "${3:-}" ] && printf '%s\n' "$line" >> "$3"
		if [[ $line =~ $2 ]]; then return 0; fi
	done
	if [ "$rc" -gt 128 ]; then echo "timed out waiting for /$2/" >&2
	else echo "end of output (the writer exited) before /$2/" >&2; fi
	return 1
}

# Folded stacks (bytes and counts) of a heapsnoop output file.
fold() { # RECORDS -> RECORDS.bytes RECORDS.count
	"$HD" --folded "$1" > "$1.bytes" && "$HD" --folded --count "$1" > "$1.count"
}

# heapsnoop's closing accounting in ERRFILE says no event was lost; if it
# does not, the accounting's loss line is shown with the failure.
check_no_loss() { # NAME ERRFILE
	if grep -q "no events lost" "$2"; then echo "ok   $1"; else
		echo "FAIL $1: $(grep -h 'EVENTS LOST\|RECORDS LOST' "$2" || echo 'no accounting line')"
		fails=$((fails + 1)); fi
}

# heapsnoop attached (-p) to PID, its records to the new fifo RECS (open
# on descriptor 6 for the caller); its stderr into ERR up to its
# "tracing" line (checked under NAME), the rest appended by a background
# cat ($drain); $hs heapsnoop's pid.
hs_attach() { # NAME PID RECS ERR
	rm -f "$T/errpipe" "$3" && mkfifo "$T/errpipe" "$3"
	"$HS" -q -p "$2" -o "$3" 2> "$T/errpipe" &
	hs=$!
	exec 5< "$T/errpipe" 6< "$3"
	check "$1: heapsnoop says it is tracing" wait_line 5 "^heapsnoop: tracing pid $2" "$4"
	cat <&5 >> "$4" &
	drain=$!
	exec 5<&-
}

finish() {
	[ "$fails" -eq 0 ]
}

# prog_phases traced in launch mode with HEAPSNOOP_ARGS, a SIGUSR1 dump at
# each of the six points it signals (each dump read whole before it goes
# on); the records in $T/rec, its stderr in $T/err; heapsnoop's exit
# status checked under NAME.
trace_phases() { # NAME HEAPSNOOP_ARGS...
	local name=$1 k; shift
	mkfifo "$T/recs"
	coproc P { exec "$HS" -q "$@" -o "$T/recs" -- "$PROGS/prog_phases" 2> "$T/err"; }
	local hs=$P_PID
	exec 5< "$T/recs"
	for k in 0 1 2 3 4 5; do
		wait_line "${P[0]}" "^dump $k\$" || return 1
		kill -USR1 "$hs"
		wait_line 5 '^heapsnoop: end-dump' "$T/rec" || return 1
		echo go >&"${P[1]}"
	done
	wait "$hs"
	check "$name" test $? -eq 0
	cat <&5 >> "$T/rec"
	exec 5<&-
}
