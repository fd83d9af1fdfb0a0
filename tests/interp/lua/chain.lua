-- chain.lua: a known Lua call chain for heapsnoop's tests
-- (tests/interp/test_lua.c, tests/tracer/test_lua.sh). Innermost first:
-- leaf (an upvalue, called by a metamethod), the __index function, cb
-- (string.gsub's callback, in chainmod.lua), string.gsub,
-- chainmod.via_gsub, pcall, Runner:go (a method), step (a local), the
-- coroutine's body, coroutine.resume, top (a global), the main chunk.
--   lua chain.lua block    leaf writes Lua's own traceback and "READY",
--                          then waits for a line on stdin
--   lua chain.lua loop N   N times through the chain, leaf allocating a
--                          string (ALLOC_STRING) and a table (ALLOC_TABLE),
--                          the last 64 of each kept; Lua's traceback of
--                          the first time ("TB" lines), the rest collected,
--                          then "DONE", then
--                          waits for a line on stdin
--   lua chain.lua wait N   "READY", then once a line comes on stdin the
--                          same as loop N
package.path = (arg[0]:match("(.*/)") or "./") .. "?.lua;" .. package.path
local mod = require("chainmod")
local mode, count = arg[1] or "block", tonumber(arg[2] or "1")
if mode == "wait" then
	io.write("READY\n") io.stdout:flush() local l = io.read()
end
local keep, n = {}, 0

local function leaf(word)
	n = n + 1
	if mode == "block" then
		io.write(debug.traceback("TB", 1), "\nREADY\n") io.stdout:flush() local l = io.read()
	elseif n == 1 then
		io.write((debug.traceback("TB", 1):gsub("\n", "\nTB "))) io.write("\n")
	end
	local s = string.rep(word, 100) .. n -- ALLOC_STRING
	keep[n % 64 + 1] = { s, n } -- ALLOC_TABLE
	return word
end

mod.lookup = setmetatable({}, { __index = function(t, k)
	local r = leaf(k)
	return r
end })

local Runner = {}
Runner.__index = Runner
function Runner:go(s)
	local ok, r = pcall(mod.via_gsub, s)
	return r
end
local runner = setmetatable({}, Runner)

local function step(s)
	local r = runner:go(s)
	return r
end

local function body(s)
	while true do
		s = coroutine.yield(step(s))
	end
end

function top(co, s)
	local ok, r = coroutine.resume(co, s)
	return r
end

local co = coroutine.create(body)
if mode == "block" then
	top(co, "alpha")
else
	for i = 1, count do top(co, "alpha") end
	collectgarbage() collectgarbage() -- what is not kept is freed before DONE
	io.write("DONE\n") io.stdout:flush() local l = io.read()
end
