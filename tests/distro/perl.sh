# perl.sh - what the distribution test (tests/distro) runs in a Debian
# root and what it expects of the logs (sourced after tests/tracer/lib.sh).
#
# The one-liner for the root's own perl: a ready line with its pid, a line
# read, 100 strings of 100 000 bytes kept (in a global array: perl frees
# no global at exit), a line saying so, a line read. `chr(...) x $n` is
# computed at run time (a constant would be folded once, and its copies
# would share one buffer): each string is grown by Perl_sv_grow, whose
# request is the 100 000 bytes, the NUL and the byte of perl's
# copy-on-write count, rounded up to 8 as for any reallocation: 100 008.
PERL='$| = 1; print "ready $$\n"; <STDIN>; $n = 100000;
@k = map { chr(65 + $_ % 26) x $n } 1 .. 100; print "kept\n"; <STDIN>'
BLOCK=100008

# The log holds the 100 blocks exactly, and DECODER (a heapdecode command,
# e.g. chroot ROOT /tmp/heapsnoop/heapdecode) names their frames: perl's
# functions in perl (its libperl is linked in), the C library's in libc.
expect_perl() { # NAME LOG DECODER...
	local n=$1 log=$2 sizes; shift 2
	# Every live block of 100 000 bytes or more, as "COUNT x SIZE".
	sizes=$("$@" -s "$log" 2> "$T/$n.hderr" |
		sed -n 's/^heapsnoop: live .*~b#size: \([0-9]*\),.*/\1/p' |
		awk '$1 >= 100000 { n[$1]++ } END { for (s in n) print n[s] " x " s }' | sort | paste -sd,)
	expect_eq "$n: the live blocks of 100 000 bytes or more" "$sizes" "100 x $BLOCK"
	if [ -z "$sizes" ]; then # no log, or none of the blocks: nothing more to check
		head -n 3 "$T/$n.hderr"
		return
	fi
	"$@" --folded "$log" > "$T/$n.bytes" 2> /dev/null
	"$@" --folded --count "$log" > "$T/$n.count" 2> /dev/null
	expect_eq "$n: live bytes grown by Perl_sv_grow" \
		"$(folded_sum "$T/$n.bytes" "Perl_sv_grow;Perl_safesysrealloc")" $((100 * BLOCK))
	expect_eq "$n: live blocks grown by Perl_sv_grow" \
		"$(folded_sum "$T/$n.count" "Perl_sv_grow;Perl_safesysrealloc")" 100
	"$@" --report --full-stacks "$log" > "$T/$n.report" 2> /dev/null
	local fn before=$fails
	for fn in Perl_safesysrealloc Perl_sv_grow Perl_runops_standard perl_run main _start; do
		check "$n: heapdecode names $fn in perl" \
			grep -qE "^    #[0-9]+ +0x[0-9a-f]+ $fn\+0x[0-9a-f]+ \(perl\)" "$T/$n.report"
	done
	check "$n: heapdecode names __libc_start_main in the C library" \
		grep -qE '^    #[0-9]+ +0x[0-9a-f]+ __libc_start_main(@@GLIBC_[0-9.]+)?\+0x[0-9a-f]+ \(libc[-.0-9]*\.so(\.6)?\)' \
		"$T/$n.report"
	if [ "$fails" -gt "$before" ] && [ -s "$T/$n.report" ]; then
		echo "$n: the report's first stack:"
		awk 'NR > 1 && /^[0-9]/ { exit } 1' "$T/$n.report" | head -n 12
	fi
}
