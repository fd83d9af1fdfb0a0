#!/bin/bash
# sysroot.sh - what symbolizing a log on another machine needs: every file
# the log's map records name (docs/OUTPUT.md), copied under DEST at its own
# path, with its separate debug file where this machine has one
# (/usr/lib/debug/.build-id/NN/REST.debug, by the record's build ID). There
# `heapdecode --sysroot DEST --debug-dir DEST/usr/lib/debug` names the
# frames as heapdecode does on the machine that wrote the log (tests/arm64:
# the arm64 guest's log here, this machine's in the guest: neither machine
# has the other's C library).
#   sysroot.sh LOG DEST
# Exits non-zero if a file the log names is missing or cannot be copied.
set -u
LOG=${1:?usage: $0 LOG DEST} DEST=${2:?usage: $0 LOG DEST}
copy() { # PATH
	mkdir -p "$DEST$(dirname "$1")" && cp "$1" "$DEST$1"
}
sed -n 's/^heapsnoop: map .* buildid=\([0-9a-f-]*\) path=\(\/.*\)$/\1 \2/p' "$LOG" | sort -u > "$DEST.list" || exit 1
[ -s "$DEST.list" ] || { echo "sysroot.sh: $LOG has no map records" >&2; exit 1; }
while read -r id path; do
	[ -e "$DEST$path" ] && continue
	copy "$path" || { echo "sysroot.sh: cannot copy $path, named by $LOG" >&2; exit 1; }
	dbg=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
	if [ "$id" != - ] && [ -f "$dbg" ]; then
		copy "$dbg" || exit 1
	fi
done < "$DEST.list"
rm -f "$DEST.list"
