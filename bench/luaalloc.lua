-- luaalloc.lua - the workload of bench/luaframes.sh: a Lua loop that
-- allocates at a fixed depth of Lua frames. Prints "ready", waits for a
-- line on stdin, makes N tables ({}: one malloc each, freed by the
-- collector as it goes) from DEPTH frames down, prints "luaalloc: N
-- calls, DEPTH frames, X ns per call", then waits for another line
-- before it exits (the tracer's statistics are read meanwhile).
--   usage: lua5.4 luaalloc.lua N DEPTH
local n, depth = tonumber(arg[1]), tonumber(arg[2])
local clock = os.clock

local function work(left)
	if left > 1 then
		local r = work(left - 1)
		return r
	end
	local t0 = clock()
	for _ = 1, n do
		local t = {}
	end
	return clock() - t0
end

io.write("ready\n") io.stdout:flush()
io.read()
local s = work(depth)
io.write(string.format("luaalloc: %d calls, %d frames, %.1f ns per call\n", n, depth, s * 1e9 / n))
io.stdout:flush()
io.read()
