-- plexit.lua: Lua frames under heapsnoop --preload when the process ends
-- by os.exit(0, false) (the state not closed: its blocks live at exit)
-- (tests/collector/test_preload_lua.sh). 10 strings of 1000 bytes, each
-- made in inner (a local: outer's upvalue) called by outer (a global) from the
-- main chunk.
local keep = {}
local function inner(i)
	keep[i] = string.rep("x", 999) .. (i % 10) -- ALLOC
end
function outer(i)
	inner(i)
end
for i = 1, 10 do outer(i) end
io.write("made\n") io.stdout:flush()
os.exit(0, false)
