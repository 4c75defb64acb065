"""The store's writes, each one Lua script, so Redis runs it atomically.

A script runs to completion before any other command, so no reader sees part of a write
and no two writers interleave. Every check a write depends on (the version exists, the
alias still has the value the caller read, the payload number is unused) happens inside
the script, so a refused write changes nothing. Python builds the JSON it stores; a
script only fills in what it alone knows (the new version number, the counter).

Key names come from :mod:`gameai.store.keys`, passed in ``KEYS`` or, for keys whose name
depends on a number the script makes, as a prefix in ``ARGV``.
"""

from __future__ import annotations

PUBLISH = """
-- KEYS: next, index, games, counter, token, deleted
-- ARGV: payload_prefix, payload, index_json, game, event_json, channel, token_ttl
local done = redis.call('GET', KEYS[5])
if done then
  return {tonumber(done), tonumber(redis.call('GET', KEYS[4]) or '0'), 0}
end
local v = redis.call('INCR', KEYS[1])
-- numbers are never reused, even if the counter key was lost: skip any number in use
while redis.call('HEXISTS', KEYS[2], v) == 1 or redis.call('HEXISTS', KEYS[6], v) == 1
      or redis.call('EXISTS', ARGV[1] .. v) == 1 do
  v = redis.call('INCR', KEYS[1])
end
redis.call('SET', ARGV[1] .. v, ARGV[2])
redis.call('HSET', KEYS[2], v, ARGV[3])
redis.call('SADD', KEYS[3], ARGV[4])
redis.call('SET', KEYS[5], v, 'EX', tonumber(ARGV[7]))
local c = redis.call('INCR', KEYS[4])
local e = cjson.decode(ARGV[5])
e['version'] = v
e['counter'] = c
redis.call('PUBLISH', ARGV[6], cjson.encode(e))
return {v, c, 1}
"""

CHANGE_ALIAS = """
-- KEYS: index, aliases, history, counter, weight, pin
-- ARGV: alias, version ('' keeps the alias), expected current ('' = unset),
--       history_json ('' = no alias change), weight ('' = unchanged), event_json, channel,
--       pin ('' leaves it, 'respect' refuses while production is pinned, else the pin JSON
--       to set with the change)
local current = redis.call('HGET', KEYS[2], ARGV[1]) or ''
if current ~= ARGV[3] then
  return {'conflict', current}
end
if ARGV[8] == 'respect' then
  local pin = redis.call('GET', KEYS[6])
  if pin then
    return {'pinned', pin}
  end
end
if ARGV[2] ~= '' then
  if redis.call('HEXISTS', KEYS[1], ARGV[2]) == 0 then
    return {'missing', ARGV[2]}
  end
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
end
if ARGV[4] ~= '' then
  redis.call('RPUSH', KEYS[3], ARGV[4])
end
if ARGV[5] ~= '' then
  redis.call('SET', KEYS[5], ARGV[5])
end
if ARGV[8] ~= '' and ARGV[8] ~= 'respect' then
  redis.call('SET', KEYS[6], ARGV[8])
end
local c = redis.call('INCR', KEYS[4])
local e = cjson.decode(ARGV[6])
e['counter'] = c
redis.call('PUBLISH', ARGV[7], cjson.encode(e))
return {'ok', tostring(c)}
"""

SET_PIN = """
-- KEYS: pin, aliases, history, counter
-- ARGV: pin_json ('' releases), history_json, event_json, channel
-- The version production points at is read here, so the pin, its history entry and its
-- event name the version that is pinned even if production moved since the caller looked.
local had = redis.call('GET', KEYS[1])
local v = redis.call('HGET', KEYS[2], 'production')
local h = cjson.decode(ARGV[2])
local e = cjson.decode(ARGV[3])
if ARGV[1] == '' then
  if not had then
    return {'none', ''}
  end
  redis.call('DEL', KEYS[1])
else
  if not v then
    return {'unset', ''}
  end
  local pin = cjson.decode(ARGV[1])
  pin['version'] = tonumber(v)
  redis.call('SET', KEYS[1], cjson.encode(pin))
end
h['from'] = v and tonumber(v) or cjson.null
h['to'] = h['from']
e['version'] = h['from']
redis.call('RPUSH', KEYS[3], cjson.encode(h))
local c = redis.call('INCR', KEYS[4])
e['counter'] = c
redis.call('PUBLISH', ARGV[4], cjson.encode(e))
return {'ok', had or ''}
"""

DELETE_VERSIONS = """
-- KEYS: index, aliases, deleted, counter
-- ARGV: payload_prefix, tombstone_json, event_json, channel, version...
-- An alias set after the caller planned is honoured here: aliased versions stay.
local aliased = {}
for _, v in ipairs(redis.call('HVALS', KEYS[2])) do
  aliased[v] = true
end
local gone = {}
for i = 5, #ARGV do
  local v = ARGV[i]
  if not aliased[v] and redis.call('HEXISTS', KEYS[1], v) == 1 then
    redis.call('HDEL', KEYS[1], v)
    redis.call('DEL', ARGV[1] .. v)
    redis.call('HSET', KEYS[3], v, ARGV[2])
    table.insert(gone, tonumber(v))
  end
end
if #gone > 0 then
  local c = redis.call('INCR', KEYS[4])
  local e = cjson.decode(ARGV[3])
  e['versions'] = gone
  e['counter'] = c
  redis.call('PUBLISH', ARGV[4], cjson.encode(e))
end
return gone
"""


PUT_PROVED = """
-- KEYS: proved, proved_keys
-- ARGV: field, entry, max_entries
-- a position already held keeps its entry (a proof does not change); a new one is refused
-- once the table holds max_entries: returns {1 written / 0 held / -1 full, size}. A new
-- field is appended to the list of the table's keys too, in the same step, so the list
-- holds exactly the hash's fields (the servers' local indexes read it).
local size = redis.call('HLEN', KEYS[1])
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  return {0, size}
end
if size >= tonumber(ARGV[3]) then
  return {-1, size}
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('RPUSH', KEYS[2], ARGV[1])
return {1, size + 1}
"""

REBUILD_PROVED_KEYS = """
-- KEYS: proved, proved_keys
-- the list of the table's keys made again from the hash, where it no longer holds exactly
-- the hash's fields (a table written before the list existed, or by a server that did not
-- keep it): returns the list's length, unchanged if it was whole
local size = redis.call('HLEN', KEYS[1])
if redis.call('LLEN', KEYS[2]) == size then
  return size
end
redis.call('DEL', KEYS[2])
local fields = redis.call('HKEYS', KEYS[1])
for i = 1, #fields, 5000 do
  redis.call('RPUSH', KEYS[2], unpack(fields, i, math.min(i + 4999, #fields)))
end
return #fields
"""
