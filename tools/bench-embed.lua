-- The bio clients of tools/bench-embed.sh (row 9c): under wrk, each thread
-- (one connection) is a client rotating over the agents whose API keys are
-- in KEYS_DIR/embed-keys-<thread>.txt (KEYS_DIR is prepended by the script).
-- Each request posts a new text, different from every other (~4,900
-- characters of words drawn at random), to the client's next agent that is
-- not waiting; a 429 sets that agent aside for its Retry-After; when every
-- agent waits, the client sleeps until the first may post again.  At the
-- end: "bio posts: STORED LIMITED OTHER" over all clients.

local threads, made = {}, 0

function setup(thread)
   made = made + 1
   local keys = {}
   for line in io.lines(KEYS_DIR .. "/embed-keys-" .. made .. ".txt") do
      if line ~= "" then keys[#keys + 1] = line end
   end
   thread:set("id", made)
   thread:set("keylist", table.concat(keys, " "))
   threads[#threads + 1] = thread
end

local words = {
   "the", "a", "my", "owner", "works", "likes", "often", "uses", "prefers", "studies",
   "research", "survey", "questions", "about", "health", "money", "travel", "food", "music",
   "films", "books", "games", "sport", "cycling", "running", "hiking", "cooking", "baking",
   "gardening", "coding", "software", "data", "science", "history", "art", "design",
   "photography", "languages", "English", "Spanish", "German", "French", "Japanese",
   "teaching", "nursing", "sales", "logistics", "finance", "law", "parents", "children",
   "family", "city", "village", "weekend", "morning", "evening", "phone", "laptop", "tablet",
   "spreadsheets", "notes", "email", "calendar", "maps", "news", "podcasts", "radio",
   "television", "streaming", "shopping", "prices", "groceries", "coffee", "tea", "bread",
   "vegetables", "fruit", "garden", "dog", "cat", "birds", "trains", "buses", "bikes", "cars",
   "flights", "hotels", "camping", "beach", "mountains", "lakes", "winter", "summer", "and",
   "with", "for", "in", "on", "at", "from", "to", "of", "by", "every", "day", "week", "month",
   "year", "since", "usually", "sometimes",
}

local keys, next_ok, cur, sent = {}, {}, 0, 0
stored, limited, other = 0, 0, 0

function init(args)
   for k in string.gmatch(keylist, "%S+") do
      keys[#keys + 1] = k
      next_ok[#keys] = 0
   end
   math.randomseed(id * 7919)
end

-- The next agent after cur that may post now, or nil.
local function free_agent()
   local now = os.time()
   for step = 1, #keys do
      local i = (cur + step - 1) % #keys + 1
      if next_ok[i] <= now then return i end
   end
   return nil
end

local function text()
   local parts, len = { string.format("Bio %d of client %d, agent %d.", sent, id, cur) }, 0
   len = #parts[1]
   while len < 4850 do
      local s = {}
      for m = 1, 8 + math.random(0, 9) do s[m] = words[math.random(#words)] end
      local sentence = " " .. table.concat(s, " ") .. "."
      parts[#parts + 1] = sentence
      len = len + #sentence
   end
   return table.concat(parts)
end

function request()
   local i = free_agent()
   if i == nil then	-- delay() waited: the agent that frees first
      i = 1
      for j = 2, #keys do if next_ok[j] < next_ok[i] then i = j end end
   end
   cur = i
   sent = sent + 1
   return wrk.format("POST", nil, { ["X-API-Key"] = keys[i], ["Content-Type"] = "application/json" },
      '{"bio":"' .. text() .. '"}')
end

function response(status, headers, body)
   if status == 200 then
      stored = stored + 1
   elseif status == 429 then
      limited = limited + 1
      local ra = tonumber(headers["Retry-After"] or headers["retry-after"] or "") or 60
      next_ok[cur] = os.time() + ra
   else
      other = other + 1
   end
end

function delay()
   if free_agent() ~= nil then return 0 end
   local first = math.huge
   for j = 1, #keys do if next_ok[j] < first then first = next_ok[j] end end
   return math.max(100, (first - os.time()) * 1000)
end

function done(summary, latency, requests)
   local s, l, o = 0, 0, 0
   for _, t in ipairs(threads) do
      s = s + t:get("stored")
      l = l + t:get("limited")
      o = o + t:get("other")
   end
   io.write(string.format("bio posts: %d %d %d\n", s, l, o))
end
