#!/bin/bash
# test_debuginfod.sh - heapdecode (static: it must not dlopen libdwfl's
# libdebuginfod.so) finds a module's debug info on a debuginfod server,
# through elfutils' client program debuginfod-find: a real debuginfod on
# loopback serves the detached debug file of prog_semantics, whose copy
# in the log was stripped of everything (symbols too); the frame is named,
# function and source line, only with DEBUGINFOD_URLS set; strace shows
# heapdecode opening the downloaded file and no libdebuginfod. Without
# debuginfod-find it says once what to install. About 3 s.
# Usage: test_debuginfod.sh BUILD_DIR
set -u
. "$(dirname "$0")/tracer/lib.sh"

for tool in debuginfod debuginfod-find strace; do
	command -v $tool > /dev/null ||
		{ echo "FAIL $tool is not installed (scripts/install-deps.sh)"; exit 1; }
done
mkdir "$T/srv"
objcopy --only-keep-debug "$PROGS/prog_semantics" "$T/srv/prog.debug"
strip --strip-all -o "$T/prog" "$PROGS/prog_semantics"
BID=$(readelf -n "$T/prog" | awk '/Build ID:/ { print $3 }')
FUNC=case_malloc_leak
V=$(nm "$T/srv/prog.debug" | awk -v f=$FUNC '$3 == f { print $1 }')
check "the stripped program has no symbol of its own" \
	bash -c "! nm '$T/prog' 2>&1 | grep -q $FUNC"
# One live block whose frame is the return address FUNC+5 at load address
# BASE; what the debug file says of it is binutils' addr2line's answer.
BASE=0x555555554000
RA=$((BASE + 0x$V + 5))
WANT=$(addr2line -f -e "$T/srv/prog.debug" $(printf '0x%x' $((0x$V + 4))) |
	sed -n '2s/.*\///p')	# prog_semantics.c:LINE
expect_eq "addr2line names the line in the debug file" "${WANT%:*}" prog_semantics.c
TOK=$(printf '~b#size: 16, 0x%x\n' $RA | "$HD" --encode)
log() { # PATH...: one pid a PATH, each the stripped program
	local pid=0
	echo "heapsnoop: dump reason=exit time=1.000 live=$# bytes=$((16 * $#)) stacks=$#"
	for p in "$@"; do
		pid=$((pid + 1))
		echo "heapsnoop: map pid=$pid start=$BASE end=$((BASE + 0x100000)) off=0x0 buildid=$BID path=$p"
		echo "heapsnoop: live pid=$pid ptr=0x10 $TOK"
	done
	echo "heapsnoop: end-dump live=$#"
}
log "$T/prog" > "$T/one.log"

env -u DEBUGINFOD_URLS "$HD" --report --full-stacks "$T/one.log" > "$T/plain" 2>&1
# The only frame not named: said, exit status 3 (heapdecode --help).
check "without DEBUGINFOD_URLS: no frame named, exit 3" test $? -eq 3
check "without DEBUGINFOD_URLS: said" grep -q '^heapdecode: no frame could be named' "$T/plain"
check "without DEBUGINFOD_URLS: the frame is not named" \
	bash -c "grep -q '$(printf '0x%x' $RA) prog+0x[0-9a-f]* \[no symbol\]' '$T/plain' && ! grep -q $FUNC '$T/plain'"

# The server: a free port is one it could bind (it says which); ready once
# it has recorded the debug file's build ID.
for try in 1 2 3 4 5 6 7 8 9 10; do
	PORT=$((20000 + RANDOM % 20000))
	coproc D { exec debuginfod -F -p $PORT -d "$T/db$try" -t 0 -g 0 -vvv "$T/srv" 2>&1; }
	wait_line "${D[0]}" "started http server|cannot start http server" "$T/srv.log" || break
	grep -q "started http server.*port=$PORT" "$T/srv.log" && break
	wait "$D_PID"
done
check "debuginfod serves on port $PORT" grep -q "started http server.*port=$PORT" "$T/srv.log"
check "debuginfod recorded the debug file" \
	wait_line "${D[0]}" "recorded buildid=$BID file=$T/srv/prog.debug" "$T/srv.log"

export DEBUGINFOD_URLS=http://127.0.0.1:$PORT DEBUGINFOD_CACHE_PATH=$T/cache
timeout 60 strace -qq -y -e trace=open,openat,openat2 -o "$T/st" \
	"$HD" --report "$T/one.log" > "$T/named" 2> "$T/named.err"
check "with DEBUGINFOD_URLS: exit 0, nothing said" \
	bash -c "test $? -eq 0 && ! test -s '$T/named.err'"
check "with DEBUGINFOD_URLS: the frame is named, function and source line" \
	grep -qE "$(printf '0x%x' $RA) $FUNC\+0x5 \(prog\) (.*/)?$WANT\$" "$T/named"
check "the debug file came from debuginfod's cache" \
	grep -q "\"$T/cache/$BID/debuginfo\"" "$T/st"
check "heapdecode loaded no libdebuginfod (nor any library)" \
	bash -c "! grep -E '\.so[.\"]' '$T/st' | grep -v ENOENT | grep -q ."
check "the server was asked for it" \
	wait_line "${D[0]}" "/buildid/$BID/debuginfo" "$T/srv.log"

# No client: said once (two modules want it), the frames left unnamed.
cp "$T/prog" "$T/prog2"
log "$T/prog" "$T/prog2" > "$T/two.log"
rm -rf "$T/cache"
PATH=/nonexistent "$HD" --report "$T/two.log" > "$T/noclient" 2> "$T/noclient.err"
check "no debuginfod-find: no frame named, exit 3" test $? -eq 3
expect_eq "no debuginfod-find: said once, with what to install" \
	"$(grep -c 'DEBUGINFOD_URLS is set, but debuginfod-find.*not installed (Debian: debuginfod' \
	"$T/noclient.err")" 1
check "no debuginfod-find: the frames are not named" bash -c "! grep -q $FUNC '$T/noclient'"
DEBUGINFOD_URLS= PATH=/nonexistent "$HD" --report "$T/one.log" > /dev/null 2> "$T/empty.err"
check "DEBUGINFOD_URLS empty: nothing asked, only that no frame was named said" \
	bash -c "test \"\$(grep -vc '^heapdecode: no frame could be named' '$T/empty.err')\" = 0"
kill "$D_PID"
finish
