-- chainmod.lua: the second chunk of chain.lua's call chain.
local M = {}

local function cb(word)
	return M.lookup[word]
end

function M.via_gsub(s)
	return (string.gsub(s, "%a+", cb))
end

return M
