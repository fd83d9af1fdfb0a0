#!/bin/bash
# test_otlp.sh - heapsnoop agent's pushes read by code that is not
# heapsnoop's, on loopback (docs/AGENT.md, "Push"): prog_agent's heap,
# known to the byte, traced by `heapsnoop agent -p PID --every-allocation
# --push-otlp URL --push-pyroscope URL --push-interval 1`; otlp_server.py,
# run with the forky-otel root's python3 (tests/distro/make-root.sh: its
# python3-opentelemetry-proto, Debian's generated classes of the official
# .proto files, and python3-protobuf), decodes every OTLP export request
# and checks the dictionary's rules, and every /ingest request's pprof
# with profile_pb2 (protoc --python_out of profile.proto). A push made
# after the program's allocations must have heapdecode's totals on the
# same run's log (a SIGUSR1 dump, read by go tool pprof), per sample type,
# its frames named, its build IDs and its resource's attributes: the
# host, the process, its executable's path and build ID, and the
# container and pod IDs of the cgroup it is moved into (a cgroup v2 named
# as Kubernetes' containerd names them; said and not checked where no
# cgroup v2 can be made). The receiver refuses the first 3 OTLP requests
# (503): the agent tries 3 times, says the failure once and the recovery
# once; it answers the 5th with a partial success (a profile rejected):
# said once with the receiver's message, its recovery once; /metrics
# counts two failed pushes.
#
# Waits: on the program's, the receiver's and the agent's lines (a fifo;
# inotify's tail -F for the agent's stderr and log), bounded by
# HS_TEST_TIMEOUT. Needs root (chroot, cgroups), the forky-otel root
# (made here once: about 40 s and 40 MiB from the mirror), protoc, go.
set -u
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
WANT="110 755360 60 705360"	# alloc_objects alloc_space inuse_objects inuse_space (prog_agent.c)
TYPES="alloc_objects alloc_space inuse_objects inuse_space"

if [ "$(id -u)" != 0 ]; then
	echo "FAIL not root: the receiver runs in a chroot"
	exit 1
fi
if ! ROOTDIR=$("$HERE/../distro/make-root.sh" forky-otel 2> "$T/root.err"); then
	echo "FAIL no forky-otel root for the receiver: $(tail -n 1 "$T/root.err")"
	exit 1
fi
R=$ROOTDIR/root
echo "receiver: $R's python3, $(grep -h '^python3-opentelemetry-proto \|^python3-protobuf ' "$ROOTDIR/packages" | paste -sd, -)"

# Wait until FILE (as it grows) has N lines matching REGEX; 1 past LIMIT.
wait_file_count() { # FILE REGEX N
	local line n=0 rc=1 tp
	exec 6< <(exec timeout "$LIMIT" tail -n +1 -F "$1" 2> /dev/null)
	tp=$!
	while IFS= read -r line <&6; do
		[[ $line =~ $2 ]] && n=$((n + 1))
		if [ "$n" -ge "$3" ]; then rc=0; break; fi
	done
	kill "$tp" 2> /dev/null
	exec 6<&-
	[ "$rc" -eq 0 ] || echo "timed out waiting for $3 lines /$2/ in $1 ($n)" >&2
	return "$rc"
}

# What the receiver's JSON FILE says, by a Python expression on j.
jq_() { # FILE EXPR
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$1" "$2" 2> /dev/null
}

# 1. The receiver, in the root, refusing the first 3 OTLP requests (503)
# and rejecting the 5th's profiles (a partial success).
mkdir -p "$T/pb"
protoc --python_out="$T/pb" --proto_path="$HERE/../../user/decode/formats/pprof/proto" profile.proto ||
	{ echo "FAIL protoc --python_out profile.proto"; exit 1; }
cp "$HERE/otlp_server.py" "$T/pb/"
# The receiver in the root (exec: called in a subshell, its pid is python's).
in_root() { exec unshare -m sh -c "mount --bind '$T/pb' '$R/mnt' && exec chroot '$R' python3 /mnt/otlp_server.py /mnt $*"; }
expect_eq "the receiver's rules refuse a request breaking any of them" "$(in_root --selftest 2>&1)" "selftest ok 15"
mkfifo "$T/recv" "$T/in" "$T/out"
in_root 3 5 > "$T/recv" 2> "$T/recv.err" &
RECV=$!
exec 9< "$T/recv"
wait_line 9 '^listening [0-9]+$' "$T/recv.log" || { cat "$T/recv.err"; exit 1; }
RPORT=$(sed -n 's/^listening //p' "$T/recv.log")

# 2. The program, in a cgroup named as a Kubernetes pod's container (where
# a cgroup v2 hierarchy takes one); the agent on it.
# Run from a copy whose name ends in a byte that is not UTF-8 (0xff), as
# any file's may: proto3's strings must be UTF-8, and each such byte is
# written %XX, as the reports print names (user/common/text.h).
BIN=$T/prog_agent$'\xff'
cp "$PROGS/prog_agent" "$BIN" || exit 1
SHOWN=$(readlink -f "$T")/prog_agent%FF
"$BIN" < "$T/in" > "$T/out" &
PROG=$!
exec 8> "$T/in" 7< "$T/out"
wait_line 7 '^ready [0-9]+$' || exit 1
CID=$(printf '%064x' "$PROG" | tr 0 c)
POD=0f1e2d3c-4b5a-4978-8a9b-$(printf '%012x' "$PROG")
CGTOP=
for v2 in $(findmnt -rn -t cgroup2 -o TARGET); do
	d=$v2/hs-otlp-$$/kubepods-besteffort-pod${POD//-/_}.slice/cri-containerd-$CID.scope
	if mkdir -p "$d" 2> /dev/null && echo "$PROG" > "$d/cgroup.procs" 2> /dev/null; then
		CGTOP=$v2/hs-otlp-$$
		echo "cgroup: $(grep '^0::' /proc/$PROG/cgroup)"
		break
	fi
	rmdir "$d" "${d%/*}" "$v2/hs-otlp-$$" 2> /dev/null
done
[ -n "$CGTOP" ] || echo "note: no cgroup v2 took the program: container.id and k8s.pod.uid not checked"
cleanup_cg() {
	[ -n "$CGTOP" ] || return 0
	local d=$CGTOP/kubepods-besteffort-pod${POD//-/_}.slice/cri-containerd-$CID.scope
	rmdir "$d" "${d%/*}" "$CGTOP" 2> /dev/null
}
# An early exit too: the program ended (lib.sh's kill), then its cgroup.
trap 'jobs -p | xargs -r kill 2> /dev/null; wait "$PROG" 2> /dev/null; cleanup_cg; rm -rf "$T"' EXIT
"$HS" agent -p "$PROG" --every-allocation --listen 127.0.0.1:0 -o "$T/rec" \
	--push-otlp "http://127.0.0.1:$RPORT" --push-pyroscope "http://127.0.0.1:$RPORT" \
	--push-interval 1 2> "$T/agent.err" 7<&- 8>&- 9<&- &
AGENT=$!
line=$(wait_file_line "$T/agent.err" 'serving http://127\.0\.0\.1:[0-9]+/metrics') || exit 1
URL=http://127.0.0.1:$(sed 's/.*127\.0\.0\.1:\([0-9]*\)\/metrics.*/\1/' <<< "$line")
echo go >&8
wait_line 7 '^done ' || exit 1

# 3. Pushes until an OTLP and an /ingest one made after "done" have the
# program's totals (at most 30 requests read).
OTLP= INGEST=
for ((i = 0; i < 30; i++)); do
	wait_line 9 '^(otlp|ingest|bad|refused|rejected) ' "$T/recv.log" || break
	read -r kind n _ < <(tail -n 1 "$T/recv.log")
	case $kind in
	otlp)
		got=$(jq_ "$T/pb/$n.json" "' '.join(str(r['profiles'][t]['total']) for r in j['resources']
			for t in '$TYPES'.split() if r['attrs'].get('process.pid') == $PROG)")
		[ -z "$OTLP" ] && [ "$got" = "$WANT" ] && cp "$T/pb/$n.json" "$T/otlp.json" && OTLP=1 ;;
	ingest)
		got=$(jq_ "$T/pb/$n.json" "' '.join(map(str, j['by_pid'].get('$PROG', {}).get('totals', [])))")
		[ -z "$INGEST" ] && [ "$got" = "$WANT" ] && cp "$T/pb/$n.json" "$T/ingest.json" && INGEST=1 ;;
	esac
	[ -n "$OTLP" ] && [ -n "$INGEST" ] && break
done
check "every request decodes and keeps the rules (no 'bad' line)" bash -c "! grep '^bad ' '$T/recv.log'"
grep '^bad ' "$T/recv.log" | head -n 3

# 4. heapdecode's totals on the same run's log.
kill -USR1 "$AGENT"
wait_file_line "$T/rec" '^heapsnoop: end-dump ' > /dev/null
"$HD" --pprof "$T/rec.pb.gz" "$T/rec" 2> "$T/hd.err"
HDT=$(raw_totals "$T/rec.pb.gz")
expect_eq "heapdecode --pprof on the agent's log: the program's totals" "$HDT" "$WANT"
OT=$([ -n "$OTLP" ] && jq_ "$T/otlp.json" "' '.join(str(r['profiles'][t]['total']) for r in j['resources']
	for t in '$TYPES'.split() if r['attrs'].get('process.pid') == $PROG)")
expect_eq "OTLP: the program's resource's profiles ($TYPES) total heapdecode's" "$OT" "$HDT"
expect_eq "/ingest: the pprof's totals per type are heapdecode's" \
	"$([ -n "$INGEST" ] && jq_ "$T/ingest.json" "' '.join(map(str, j['by_pid']['$PROG']['totals']))")" "$HDT"

# 5. What the OTLP push says beside its totals.
O=$T/otlp.json
if [ -z "$OTLP" ]; then O=/dev/null; fi
expect_eq "OTLP: one profile per pprof type, its unit" \
	"$(jq_ "$O" "' '.join(t + '/' + p['unit'] for r in j['resources'] if r['attrs'].get('process.pid') == $PROG
		for t, p in r['profiles'].items())")" \
	"alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes"
expect_eq "OTLP: the /ingest push's types are the same" \
	"$(jq_ "$T/ingest.json" "' '.join(j['types'])" 2> /dev/null)" \
	"alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes"
attr() { jq_ "$O" "[r['attrs'].get('$1', '') for r in j['resources'] if r['attrs'].get('process.pid') == $PROG][0]"; }
expect_eq "OTLP resource: process.pid" "$(attr process.pid)" "$PROG"
expect_eq "OTLP resource: host.name" "$(attr host.name)" "$(hostname)"
expect_eq "OTLP resource: process.executable.path, its 0xff as %FF" "$(attr process.executable.path)" \
	"$SHOWN"
expect_eq "OTLP resource: process.executable.name and service.name" \
	"$(attr process.executable.name) $(attr service.name)" "prog_agent%FF prog_agent%FF"
BID=$(readelf -n "$PROGS/prog_agent" | sed -n 's/.*Build ID: //p')
expect_eq "OTLP resource: the executable's build ID (readelf -n's)" \
	"$(attr process.executable.build_id.gnu)" "$BID"
expect_eq "OTLP dictionary: the program's mapping carries its build ID" \
	"$(jq_ "$O" "[m['attrs'].get('process.executable.build_id.gnu') for r in j['resources']
		for m in r['mappings'] if m['file'] == '$SHOWN'][0]")" "$BID"
if [ -n "$CGTOP" ]; then
	expect_eq "OTLP resource: container.id from /proc/PID/cgroup" "$(attr container.id)" "$CID"
	expect_eq "OTLP resource: k8s.pod.uid from /proc/PID/cgroup" "$(attr k8s.pod.uid)" "$POD"
else
	expect_eq "OTLP resource: no container.id outside a container" "$(attr container.id)" ""
fi
check "OTLP: hold_small and hold_big named in the program's stacks" bash -c \
	"grep -q '\"hold_small\"' '$O' && grep -q '\"hold_big\"' '$O'"
expect_eq "OTLP and /ingest: the same functions named" \
	"$(jq_ "$O" "' '.join([r['functions'] for r in j['resources'] if r['attrs'].get('process.pid') == $PROG][0])")" \
	"$(jq_ "$T/ingest.json" "' '.join(j['by_pid']['$PROG']['functions'])")"

# 6. The first OTLP push refused 3 times (503): said once, its recovery
# once; the 5th request's partial success said once, its recovery once;
# two pushes counted failed. (Waited for: the second recovery's line.)
wait_file_count "$T/agent.err" 'OTLP push to .* goes through again' 2
expect_eq "the receiver refused 3 OTLP requests" "$(grep -c '^refused ' "$T/recv.log")" 3
expect_eq "the failure said once, with why" \
	"$(grep -c 'agent: OTLP push to 127\.0\.0\.1:[0-9]* failed: HTTP 503 (3 tries)' "$T/agent.err")" 1
expect_eq "the partial success said once, with the receiver's why" \
	"$(grep -c "agent: OTLP push to 127\.0\.0\.1:[0-9]* failed: 1 profiles rejected: the test's rejection" \
		"$T/agent.err")" 1
expect_eq "the recoveries said, once each" "$(grep -c 'OTLP push to .* goes through again' "$T/agent.err")" 2
curl -s -o "$T/metrics" "$URL/metrics"
expect_eq "/metrics: two pushes failed" \
	"$(sed -n 's/^heapsnoop_agent_push_failures_total //p' "$T/metrics")" 2
check "/metrics: pushes counted (4 or more)" bash -c \
	"awk '/^heapsnoop_agent_pushes_total / { n = \$2 } END { exit !(n >= 4) }' '$T/metrics'"

# 7. The program ends: so does the agent, nothing lost.
end_agent "the agent ends with its -p target, exit 0" "$T/agent.err"
check_no_loss "the agent lost no event" "$T/agent.err"
kill "$RECV" 2> /dev/null
exec 9<&-
wait "$RECV" 2> /dev/null
cleanup_cg
finish
