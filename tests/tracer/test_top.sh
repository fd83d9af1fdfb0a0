#!/bin/bash
# test_top.sh - heapsnoop --top's live view (output/liveview.c) on a
# 120x30 terminal (tmux): prog_top keeps 256 KiB more from top_leak() at
# each of its phases and waits on a fifo between them; at each, the
# screen (tmux capture-pane, polled until it shows the phase's size, a
# bounded number of times) names top_leak at prog_top.c:LINE with the
# bytes held then and the totals line, and one of the redraws written
# after the phase began (every byte the view writes is kept by tmux
# pipe-pane, from before heapsnoop starts; a redraw is one write, from
# ESC[H to ESC[J) shows the growth since the last redraw: the screen
# alone would show it only until the next redraw, 1 s later, and a busy
# machine can poll past that. A resize redraws to the new width at once
# (SIGWINCH). At the end the normal screen is back with the closing
# accounting, and the records in -o are whole, as without the view.
# About 4 s.
set -u
. "$(dirname "$0")/lib.sh"

if ! command -v tmux > /dev/null; then
	echo "skip: no tmux"
	exit 0
fi
TMUX_CMD=(tmux -L "hs_top_$$" -f /dev/null)
trap 'rm -rf "$T"; "${TMUX_CMD[@]}" kill-server 2> /dev/null; jobs -p | xargs -r kill 2>/dev/null' EXIT
mkfifo "$T/in" "$T/out" "$T/go"
# heapsnoop starts once the pane's output is piped to $T/stream (a line on go).
: > "$T/stream"
"${TMUX_CMD[@]}" new-session -d -s top -x 120 -y 30 \
	"read -r go < '$T/go'; \
	 '$HS' --top -o '$T/rec.log' -- '$PROGS/prog_top' < '$T/in' > '$T/out'; \
	 echo \"heapsnoop exited \$?\"; exec sleep 600"
"${TMUX_CMD[@]}" pipe-pane -o -t top "cat >> '$T/stream'"
echo go > "$T/go"
exec 7> "$T/in" 8< "$T/out"

# Poll the screen until it matches REGEX (50 tries, 0.2 s apart: 10 s).
screen_shows() { # REGEX
	local i
	for i in $(seq 50); do
		"${TMUX_CMD[@]}" capture-pane -p -t top > "$T/screen"
		grep -Eq "$1" "$T/screen" && return 0
		sleep 0.2
	done
	echo "the screen never showed /$1/; it shows:" >&2
	cat "$T/screen" >&2
	return 1
}

# Poll the view's output after byte OFFSET of $T/stream until one whole
# redraw (ESC[H up to ESC[J; its lines without ESC[K and CR) has a line
# matching REGEX (50 tries, 0.2 s apart: 10 s); that screen is left in
# $T/redraw.
stream_shows() { # OFFSET REGEX
	local i
	for i in $(seq 50); do
		tail -c +"$(($1 + 1))" "$T/stream" |
			sed 's/\x1b\[K//g; s/\r//g; s/\x1b\[H/\n\f\n/g; s/\x1b\[J/\n\v\n/g' |
			re=$2 awk '$0 == "\f" { n = hit = 0; inside = 1; next }
				$0 == "\v" { if (inside && hit) { for (j = 1; j <= n; j++) print l[j]; exit 0 }
					inside = hit = 0; next }
				inside { l[++n] = $0; if ($0 ~ ENVIRON["re"]) hit = 1 }' > "$T/redraw" &&
			[ -s "$T/redraw" ] && return 0
		sleep 0.2
	done
	echo "no redraw after byte $1 showed /$2/; the last one written:" >&2
	tail -c +"$(($1 + 1))" "$T/stream" | sed 's/\x1b\[[KJ]//g; s/\r//g; s/\x1b\[H/\n\f\n/g' |
		awk '$0 == "\f" { s = ""; next } { s = s $0 "\n" } END { printf "%s", s }' >&2
	return 1
}

row='^ +([0-9.]+ KiB) +([-+0-9.a-zA-Z ]*) +([0-9]+)  top_leak prog_top\.c:[0-9]+ < main( |$)'
for k in 1 2 3; do
	wait_line 8 "^phase $k\$" "$T/phases" || exit 1
	kib=$((k * 256)).0
	check "phase $k: top_leak holds $kib KiB on the screen" \
		screen_shows "^ +$kib KiB .* top_leak prog_top\.c:[0-9]+ < main"
	check "phase $k: the totals line says $kib KiB in $((k * 4)) blocks" \
		grep -Eq "^live $kib KiB in $((k * 4)) blocks, peak $kib KiB; [0-9]+ allocs/s, 0 frees/s; lost 0, shed 0\$" "$T/screen"
	check "phase $k: the title names the process" \
		grep -Eq '^heapsnoop --top: pid [0-9]+ \(prog_top\), every 1 s' "$T/screen"
	if [ "$k" -gt 1 ]; then
		# A redraw of this phase after one of the last: it grew by 256 KiB.
		check "phase $k: the growth since the last redraw is +256.0 KiB" \
			stream_shows "$released" "^ +$kib KiB +\+256\.0 KiB +$((k * 4))  top_leak "
	fi
	check "phase $k: every line fits the 120 columns" \
		awk 'length > 120 { exit 1 }' "$T/screen"
	if [ "$k" -eq 2 ]; then
		"${TMUX_CMD[@]}" resize-window -t top -x 60 -y 30
		check "a resize redraws to the new width (60 columns)" \
			screen_shows '^ +512\.0 KiB .* top_leak prog_top\.c:[0-9]+( <|$)'
		check "... every line within it" awk 'length > 60 { exit 1 }' "$T/screen"
		"${TMUX_CMD[@]}" resize-window -t top -x 120 -y 30
	fi
	# The view's bytes up to here are all from before the next phase.
	released=$(stat -c %s "$T/stream")
	echo >&7
done
exec 7>&-
check "at the end the normal screen is back, with the accounting" \
	screen_shows '^heapsnoop exited 0$'
check "... which is heapsnoop's usual closing lines" \
	grep -q '^heapsnoop: traced 12 allocations and 0 frees' "$T/screen"
check "... and no view is left on it" bash -c "! grep -q 'top_leak\|^heapsnoop --top' '$T/screen'"
# The records are the tracer's own: one dump, whole, 768 KiB from top_leak.
fold "$T/rec.log"
expect_eq "-o's records: top_leak's 768 KiB live" \
	"$(folded_sum "$T/rec.log.bytes" "main;top_leak")" $((768 * 1024))
expect_eq "-o's records: one dump, whole" \
	"$(grep -c '^heapsnoop: dump \|^heapsnoop: end-dump' "$T/rec.log")" 2
# No -o, standard output a terminal: the records go to a log of their own
# (heapsnoop.PROGRAM.PID.heap, as without --top), whole, never on the view.
mkdir -p "$T/tty" && (cd "$T/tty" && script -qec "$HS --top -- true" /dev/null > "$T/ttyrun" 2>&1)
ttyrc=$?
check "--top, no -o, on a terminal: traced (exit 0), the records not on the terminal" \
	bash -c "[ $ttyrc -eq 0 ] && ! grep -q '^heapsnoop: live \|~m#' '$T/ttyrun'"
check "... but in heapsnoop.true.PID.heap, one whole dump" \
	bash -c "grep -q '^heapsnoop: end-dump' '$T'/tty/heapsnoop.true.*.heap"
[ "$fails" -eq 0 ] || exit 1
echo "all tests passed"
