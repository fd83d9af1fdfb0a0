#!/bin/bash
# test_outfile.sh - the files heapsnoop (-o) and heapdecode (--flamegraph)
# write: created 0600, never through a symbolic link (another user's,
# planted), an existing file untouched when the command cannot start, -A
# appending with the file's content and mode kept, and
# the exit status of a run that cannot write. About 2 s.
set -u
. "$(dirname "$0")/lib.sh"

mode() { stat -c %a "$1"; }

# A new output file holds address layouts: 0600, whatever the umask.
(umask 022; "$HS" -q -o "$T/new.log" -- /bin/true 2> "$T/e1")
check "-o: the run succeeds" test $? -eq 0
expect_eq "-o: a new file is mode 0600" "$(mode "$T/new.log")" 600
check "-o: the new file has the final dump" grep -q '^heapsnoop: end-dump' "$T/new.log"

# An existing file the user readable by all: emptied, then 0600.
printf 'old\n' > "$T/old.log"; chmod 644 "$T/old.log"
"$HS" -q -o "$T/old.log" -- /bin/true 2> "$T/e2"
expect_eq "-o: an existing file is set to 0600" "$(mode "$T/old.log")" 600
check "-o: its old content is gone" bash -c "! grep -q '^old$' '$T/old.log'"

# A symbolic link planted where the output goes: refused, target intact.
printf 'precious\n' > "$T/target"; chmod 644 "$T/target"
ln -s "$T/target" "$T/link.log"
"$HS" -q -o "$T/link.log" -- /bin/true 2> "$T/e3"
check "-o symlink: exit 1" test $? -eq 1
check "-o symlink: says it is a symbolic link" grep -q "link.log is a symbolic link" "$T/e3"
expect_eq "-o symlink: the target is untouched" "$(cat "$T/target")" precious
expect_eq "-o symlink: the target's mode is untouched" "$(mode "$T/target")" 644

# A command that cannot start: the existing output is left as it was.
printf 'keep\n' > "$T/keep.log"
"$HS" -q -o "$T/keep.log" -- /nonexistent/cmd 2> "$T/e4"
check "-o, no such command: exit 1" test $? -eq 1
expect_eq "-o, no such command: the file is not truncated" "$(cat "$T/keep.log")" keep

# -A: appended to, content and mode kept; two runs, two final dumps, and
# heapdecode reads the last one.
printf 'previous\n' > "$T/app.log"; chmod 640 "$T/app.log"
"$HS" -q -A -o "$T/app.log" -- "$PROGS/prog_semantics" > /dev/null 2> "$T/e8"
check "-A: exit 0" test $? -eq 0
"$HS" -q -A -o "$T/app.log" -- /bin/true 2> "$T/e9"
expect_eq "-A: the old content kept, first" "$(head -n 1 "$T/app.log")" previous
expect_eq "-A: the file's mode kept" "$(mode "$T/app.log")" 640
expect_eq "-A: one final dump per run" "$(grep -c '^heapsnoop: end-dump' "$T/app.log")" 2
"$HD" --report "$T/app.log" > "$T/app.rep" 2> "$T/e10"
check "-A: heapdecode reads the last run's dump (true's, no prog_semantics stack)" \
	bash -c "! grep -q 'prog_semantics' '$T/app.rep'"
"$HD" --report --dump first "$T/app.log" > "$T/app1.rep" 2> "$T/e10"
check "-A: the first run's dump is there (--dump first)" grep -q 'prog_semantics' "$T/app1.rep"
"$HS" -q -A -- /bin/true 2> "$T/e11"
check "-A without -o: exit 1" test $? -eq 1
check "-A without -o: says so" grep -q -- "-A appends to -o FILE" "$T/e11"

# heapdecode --flamegraph: the same rules.
"$HS" -q -- /bin/true > "$T/rec" 2> /dev/null
(umask 022; "$HD" --flamegraph "$T/g.svg" "$T/rec" 2> "$T/e5")
check "--flamegraph: exit 0" test $? -eq 0
expect_eq "--flamegraph: a new SVG is mode 0600" "$(mode "$T/g.svg")" 600
ln -s "$T/target" "$T/glink.svg"
"$HD" --flamegraph "$T/glink.svg" "$T/rec" 2> "$T/e6"
check "--flamegraph symlink: exit 2" test $? -eq 2
check "--flamegraph symlink: says so" grep -q "glink.svg is a symbolic link" "$T/e6"
expect_eq "--flamegraph symlink: the target is untouched" "$(cat "$T/target")" precious
printf 'keep\n' > "$T/keep.svg"
"$HD" --flamegraph "$T/keep.svg" "$T/nonexistent" 2> "$T/e7"
check "--flamegraph, unreadable input: exit 2" test $? -eq 2
expect_eq "--flamegraph, unreadable input: the SVG is not truncated" "$(cat "$T/keep.svg")" keep
finish
