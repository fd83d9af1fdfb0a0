# lib.sh - what the agent's tests share (sourced, after tests/tracer/lib.sh,
# which it sources): go tool pprof kept inside the test's directory and
# off the network, the wait limit, waiting on a file's lines, and a
# profile's totals as `go tool pprof -raw` reads them, the agent's end.
. "$(dirname "$0")/../tracer/lib.sh"
export HOME=$T/home GOCACHE=$T/gocache GOPROXY=off GOTOOLCHAIN=local PPROF_TMPDIR=$T/pprof
mkdir -p "$HOME" "$PPROF_TMPDIR"
LIMIT=${HS_TEST_TIMEOUT:-60}

# The first line of FILE (as it grows) matching REGEX, printed; 1 past LIMIT.
wait_file_line() { # FILE REGEX
	local line rc=1 tp
	exec 6< <(exec timeout "$LIMIT" tail -n +1 -F "$1" 2> /dev/null)
	tp=$!
	while IFS= read -r line <&6; do
		if [[ $line =~ $2 ]]; then printf '%s\n' "$line"; rc=0; break; fi
	done
	kill "$tp" 2> /dev/null
	exec 6<&-
	[ "$rc" -eq 0 ] || echo "timed out waiting for /$2/ in $1" >&2
	return "$rc"
}

# Sample values of `go tool pprof -raw` SOURCE summed: "V1 V2 ...".
raw_totals() { # SOURCE
	go tool pprof -raw "$1" 2> "$T/pprof.err" |
		awk '/^Samples:/ {s = 1; getline; next} /^Locations/ {s = 0}
		s && /^ *-?[0-9]+ .*:/ { sub(/:.*/, ""); for (i = 1; i <= NF; i++) t[i] += $i; n = NF }
		END { for (i = 1; i <= n; i++) printf "%s%d", (i > 1 ? " " : ""), t[i]; print "" }'
}

# The agent's exit STATUS is 0, or 3 (HS_EXIT_LOST) where only mapping
# records were lost, as its stderr ERR says: every process's mmaps fill
# the kernel's buffer on a busy machine, said apart.
check_agent_end() { # NAME STATUS ERR
	check "$1" bash -c \
		"test $2 -eq 0 || { test $2 -eq 3 && grep -q 'MAPPING RECORDS LOST' '$3'; }"
}

# The program ($PROG, its pipes on fds 7 and 8) ended, then the agent
# ($AGENT): sent SIGTERM first with "term", else it ends with its -p
# target; its exit checked under NAME (check_agent_end; its stderr ERR).
end_agent() { # NAME ERR [term]
	local status
	exec 8>&- 7<&-
	wait "$PROG"
	[ "${3:-}" = term ] && kill -TERM "$AGENT"
	wait "$AGENT"
	status=$?
	check_agent_end "$1 (status $status)" "$status" "$2"
}
