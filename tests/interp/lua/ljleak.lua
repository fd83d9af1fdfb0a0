-- ljleak.lua: a known LuaJIT leak for heapsnoop's tests (tests/tracer/test_luajit.sh).
--   luajit ljleak.lua N   keeps N strings of 1000 bytes each (a GCstr of
--                         24 + 1004 bytes: LuaJIT's lj_str_size), made by
--                         grow at LEAK, then "DONE" and waits for a line
--                         on stdin
local keep = {}

function grow(n)
	for i = 1, n do
		keep[i] = string.rep("x", 996) .. string.format("%04d", i) -- LEAK
	end
end

grow(tonumber(arg[1] or "500"))
collectgarbage() collectgarbage()
io.write("DONE\n") io.stdout:flush() local l = io.read()
