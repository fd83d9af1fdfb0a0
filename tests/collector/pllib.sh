# pllib.sh - helpers for the tests of interpreter frames under heapsnoop
# --preload (sourced after tests/tracer/lib.sh): test_preload_python.sh
# and test_preload_lua.sh end an interpreter before heapsnoop takes its
# hello alike.

# heapsnoop --preload -v -o OUT running CMD..., stopped (SIGSTOP) once the
# command's shell has said its pid and before it execs CMD, until CMD has
# said READY and ended (a zombie: no mappings left, its table alone says
# where its binary was); then let go to its end. Sets $late_pid (CMD's
# pid); heapsnoop's stderr in OUT.err. Checks that CMD was a zombie and
# that heapsnoop exits 0.
ended_first() { # OUT READY CMD...
	local out=$1 ready=$2 hs_pid; shift 2
	rm -f "$out.go" && mkfifo "$out.go"
	coproc LATE { exec "$HS" --preload -v -o "$out" -- sh -c "echo \$\$; read x < '$out.go'; exec \"\$@\"" \
		sh "$@" 2> "$out.err"; }
	hs_pid=$LATE_PID
	read -r -t 60 late_pid <&"${LATE[0]}"
	kill -STOP "$hs_pid"
	echo go > "$out.go"
	wait_line "${LATE[0]}" "$ready" &&
		python3 -c "import os, select; select.select([os.pidfd_open($late_pid)], [], [], 60)"
	check "ended first: $(basename "$1") is a zombie while heapsnoop is stopped" \
		bash -c "[ \"\$(awk '{ print \$3 }' /proc/$late_pid/stat)\" = Z ]"
	kill -CONT "$hs_pid"
	wait "$hs_pid"
	check "ended first: heapsnoop exits 0" test $? -eq 0
}
