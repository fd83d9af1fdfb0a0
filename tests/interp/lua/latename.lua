-- latename.lua: a function that allocates once, called through a local
-- before any global names it, made a global after (heapsnoop's
-- tests/tracer/test_luaglobals.sh). "ONE" once it allocated, then waits
-- for a line; then sets the global, says "TWO", waits for a line.
local kept
local function once()
	kept = string.rep("late", 300) -- ALLOC_ONCE: 1201 bytes and a TString's 24
	return #kept
end
once()
io.write("ONE\n") io.stdout:flush() local l = io.read()
late_named = once
io.write("TWO\n") io.stdout:flush() l = io.read()
