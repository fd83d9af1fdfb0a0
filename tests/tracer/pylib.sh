# pylib.sh - helpers for the tests of Python frames (sourced after lib.sh):
# test_python.sh (the BPF tracer) and tests/collector/test_preload_python.sh
# (heapsnoop --preload) read stacks alike.
PYLIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# The other CPython builds run where they are here, one a line "LABEL
# PYTHON": python-build-standalone's 3.12 (the Google Cloud SDK's copy;
# clang, --enable-shared, no .symtab: HS_PY_PBS312 names another),
# pyenv's 3.12.1 and 3.13.0 (built from CPython's source, --enable-shared,
# GCC; HS_PYENV_ROOT, default /root/.pyenv). A "skipped: no ..." line on
# standard error for each one absent (CI machines may have none).
other_pythons() {
	local pyenv=${HS_PYENV_ROOT:-/root/.pyenv}/versions label py
	while read -r label py; do
		if [ -x "$py" ]; then
			echo "$label $py"
		else
			echo "skipped: no $label here ($py)" >&2
		fi
	done <<-EOF
	pbs-3.12 ${HS_PY_PBS312:-/usr/lib/google-cloud-sdk/platform/bundledpythonunix/bin/python3.12}
	pyenv-3.12.1 $pyenv/3.12.1/bin/python3.12
	pyenv-3.13.0 $pyenv/3.13.0/bin/python3.13
	EOF
}

# The python of a CPython build tests/tracer/make-python.sh makes (NAME:
# 3.14t or 3.13t, its prefix/bin/python3.14t or python3.13t), made now if
# it is not in its cache (once: minutes). HS_PY314T, HS_PY313T name
# another. False, with a "note: ... not run" line naming the command,
# where it is not there and cannot be made (no network to the mirror, no
# compiler, not root).
python_build() { # NAME
	local dir var=HS_PY${1//./}
	var=${var^^}
	if [ -n "${!var:-}" ]; then
		echo "${!var}"
		return 0
	fi
	if dir=$("$PYLIB_DIR/make-python.sh" "$1" 2> "${T:-/tmp}/make-python.$1.err"); then
		echo "$dir/prefix/bin/python$1"
		return 0
	fi
	echo "note: no CPython $1 build and it could not be made ($(tail -n 1 "${T:-/tmp}/make-python.$1.err")): $1 not run; make it with: tests/tracer/make-python.sh $1" >&2
	return 1
}

# The root filesystem with forky's python3.14 (HS_PYROOT314, or
# tests/distro/make-root.sh's forky root, made now if it is not in its
# cache: some 90 s once, as root, with network to the mirror); nothing
# where there is none and it cannot be made (its reason on standard error).
forky_root() {
	local d
	if [ -n "${HS_PYROOT314:-}" ]; then
		echo "$HS_PYROOT314"
	elif [ "$(id -u)" = 0 ] && d=$("$PYLIB_DIR/../distro/make-root.sh" forky 2> "${T:-/tmp}/forky.err"); then
		echo "$d/root"
	else
		tail -n 1 "${T:-/tmp}/forky.err" >&2
	fi
}

# The frames of LOG's `live` records of SIZE bytes (heapdecode -s),
# innermost first, one a line: "py FUNCTION FILE:LINE" (FILE's last
# component) or "c NAME"; a line "--" after each record's.
stacks_of() { # LOG SIZE
	"$HD" -s "$1" | awk -v size="$2" '
		function end() { if (on) print "--"; on = 0 }
		/^heapsnoop: live / { end(); on = index($0, "~b#size: " size ",") > 0; next }
		on && /^ *#[0-9]+ +0x/ {
			if ($4 == "[python]") {
				f = substr($0, index($0, "[python] ") + 9); sub(/.*\//, "", f)
				print "py " $3 " " f
			} else print "c " $3
			next
		}
		{ end() }
		END { end() }'
}

# The first such record's frames (stacks_of's, without the "--").
stack_of() { # LOG SIZE
	stacks_of "$1" "$2" | awk '/^--$/ { exit } { print }'
}

# The Python frames of a stack (stack_of's), in order, on one line.
py_frames() { # STACKFILE
	awk '$1 == "py" { printf "%s%s", n++ ? ", " : "", substr($0, 4) } END { print "" }' "$1"
}

# A chain's checks: its Python frames are WANT, native frames come before
# the first and after the last, and no eval-loop frame is left.
expect_chain() { # NAME STACKFILE WANT
	expect_eq "$1: the Python frames in order" "$(py_frames "$2")" "$3"
	check "$1: native frames before and after them" \
		awk '$1 == "py" { p = 1 } $1 == "c" && !p { before = 1 } $1 == "c" && p { after = 1 }
		     END { exit !(before && after) }' "$2"
	check "$1: no _PyEval_EvalFrameDefault frame left" \
		bash -c "! grep -q '_PyEval_EvalFrameDefault' '$2'"
}

# interleave.py's record in LOG (the loop re-entered from C: map(), a
# class call, a generator): each eval frame its segment of Python frames
# in order, C frames between the segments, no eval frame or cut= left.
# LABEL: what the checks' names begin with.
expect_reentered() { # LOG [LABEL]
	local l=${2:+$2 }
	stack_of "$1" 555556 > "$1.stack"
	expect_eq "${l}re-entered: the Python frames in order" "$(py_frames "$1.stack")" \
		"leaf interleave.py:12, gen interleave.py:17, K.__init__ interleave.py:22, g interleave.py:26, main interleave.py:30, <module> interleave.py:34"
	expect_eq "${l}re-entered: C frames between gen and K.__init__, K.__init__ and g, g and main" \
		"$(awk '$1 == "py" { if (c && n) runs++; c = 0; n++ } $1 == "c" { c = 1 } END { print runs + 0 }' \
		   "$1.stack")" 3
	check "${l}re-entered: no _PyEval_EvalFrameDefault frame left, no cut=" \
		bash -c "! grep -q _PyEval_EvalFrameDefault '$1.stack' &&
			 '$HD' -s '$1' | grep '^heapsnoop: live .*~b#size: 555556,' | grep -vq 'cut='"
}

# execloop.py 100's records in LOG: each exec'd code object's blocks (a
# third of them each) named after the code that ran, none "<code gone>".
expect_exec_named() { # LOG
	stacks_of "$1" 444445 | awk '$1 == "py" { s = s substr($0, 4) ", " } /^--$/ { print s; s = "" }' |
		sort | uniq -c > "$1.stacks"
	for k in 0 1 2; do
		want=$(( (100 - k + 2) / 3 ))
		got=$(awk -v s="made_by_exec <exec $k>:2, <module> <exec $k>:3, <module> execloop.py:13, " \
			'substr($0, index($0, $2)) == s { print $1 }' "$1.stacks")
		expect_eq "exec'd code: blocks named made_by_exec (<exec $k>:2) <- <module> (<exec $k>:3) <- execloop.py:13" "$got" "$want"
	done
	expect_eq "exec'd code: no frame <code gone>" "$("$HD" -s "$1" | grep -c '<code gone>')" 0
}

# threads.py's records in LOG: each of its 20 blocks under nogil_alloc
# (threads.py:16) <- run_it (threads.py:21). LABEL: as expect_reentered's.
expect_nogil_chain() { # LOG [LABEL]
	expect_eq "${2:+$2 }a thread that released the GIL: each of the 20 under nogil_alloc (threads.py:16) <- run_it (threads.py:21)" \
		"$(stacks_of "$1" 333333 | awk '$1 == "py" && !n++ { s = $2 " " $3 } $1 == "py" && n == 2 { s = s ", " $2 " " $3 }
			/^--$/ { if (s == "nogil_alloc threads.py:16, run_it threads.py:21") k++; n = 0; s = "" } END { print k + 0 }')" 20
}
