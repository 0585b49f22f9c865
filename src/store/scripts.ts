/**
 * The Lua scripts that make a read-merge-write one atomic step in Redis. Each runs as one
 * command (EVALSHA), so two routers writing at once never lose either's news.
 */

/**
 * Cooldown merge, the rule of `mergeCooldown` (src/quota/cooldown.ts): the later `untilMs` wins
 * with its reason and windows; `setAtMs` is the later of the two. Never shortens one.
 * KEYS[1] hash, ARGV[1] field, ARGV[2] cooldown JSON. Returns the stored JSON.
 */
export const MERGE_COOLDOWN = `
local nxt = cjson.decode(ARGV[2])
local old = redis.call('HGET', KEYS[1], ARGV[1])
if old then
  local o = cjson.decode(old)
  local setAt = math.max(o.setAtMs, nxt.setAtMs)
  if not (nxt.untilMs > o.untilMs) then
    if o.setAtMs >= nxt.setAtMs then return old end
    nxt = o
  end
  nxt.setAtMs = setAt
end
local out = cjson.encode(nxt)
redis.call('HSET', KEYS[1], ARGV[1], out)
return out
`;

/**
 * Lifts a cooldown unless a later-ending one was set meanwhile (by this router or another).
 * KEYS[1] hash, ARGV[1] field, ARGV[2] the lifted cooldown's untilMs. Returns 1 when deleted.
 */
export const LIFT_COOLDOWN = `
local old = redis.call('HGET', KEYS[1], ARGV[1])
if not old then return 0 end
if cjson.decode(old).untilMs > tonumber(ARGV[2]) then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
return 1
`;

/**
 * Writes a JSON value to a hash field unless the stored one is newer by `ARGV[3]`'s field.
 * KEYS[1] hash, ARGV[1] field, ARGV[2] JSON, ARGV[3] the name of its epoch-ms field. Returns 1 when written.
 */
export const NEWER_WINS = `
local old = redis.call('HGET', KEYS[1], ARGV[1])
if old then
  local o = cjson.decode(old)
  local n = cjson.decode(ARGV[2])
  local ot = o[ARGV[3]]
  if type(ot) == 'number' and ot > n[ARGV[3]] then return 0 end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
`;

/**
 * A binding, unless the stored one was served later; its key expires after the idle TTL counted
 * from that serving. KEYS[1] key, ARGV[1] JSON, ARGV[2] lastServedAtMs, ARGV[3] TTL ms. Returns 1 when written.
 */
export const BIND = `
local old = redis.call('GET', KEYS[1])
if old and cjson.decode(old).lastServedAtMs > tonumber(ARGV[2]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
return 1
`;

/**
 * Every live router's in-flight record; ids whose key expired (a router that stopped or was
 * killed) leave the set. KEYS[1] the routers set, ARGV[1] the in-flight key prefix.
 * Returns a flat list: id, JSON, id, JSON, …
 */
export const GATHER_INFLIGHT = `
local out = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local v = redis.call('GET', ARGV[1] .. id)
  if v then
    out[#out + 1] = id
    out[#out + 1] = v
  else
    redis.call('SREM', KEYS[1], id)
  end
end
return out
`;

/** Deletes a lock only when its value is still ours. KEYS[1] lock, ARGV[1] owner. Returns 1 when released. */
export const RELEASE_LOCK = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/** Length of one pair's print in a credentials hash's `seen` field, hex characters. */
export const PAIR_PRINT_CHARS = 16;
/** Prints the `seen` field keeps, newest first. */
export const PAIR_PRINTS_KEPT = 16;

/**
 * Writes a sealed pair when the stored version is the one the writer read (compare-and-set), bumps
 * the version, and puts the pair's print in front of `seen` (the pairs the pool has held, newest
 * first, {@link PAIR_PRINTS_KEPT} of {@link PAIR_PRINT_CHARS} hex each). KEYS[1] credentials hash,
 * ARGV[1] expected version ('' = absent), ARGV[2] blob, ARGV[3] writer id, ARGV[4] epoch ms,
 * ARGV[5] the pair's print. Returns the new version, or -1 when another writer came first.
 */
export const WRITE_CREDENTIALS = `
local v = redis.call('HGET', KEYS[1], 'v')
if (v or '') ~= ARGV[1] then return -1 end
local nv = tonumber(v or '0') + 1
local seen = redis.call('HGET', KEYS[1], 'seen') or ''
seen = string.sub(ARGV[5] .. seen, 1, ${PAIR_PRINT_CHARS * PAIR_PRINTS_KEPT})
redis.call('HSET', KEYS[1], 'v', nv, 'blob', ARGV[2], 'by', ARGV[3], 'at', ARGV[4], 'seen', seen)
return nv
`;

/**
 * An account's learners (src/quota/learnedCosts.ts), window by window: the pool keeps, per window, the
 * copy with more samples (`n`). KEYS[1] hash, ARGV[1] account, ARGV[2] its windows' JSON. Returns 1.
 */
export const MORE_SAMPLES = `
local old = redis.call('HGET', KEYS[1], ARGV[1])
local nxt = cjson.decode(ARGV[2])
if old then
  local o = cjson.decode(old)
  for k, w in pairs(o) do
    if nxt[k] == nil or (type(w) == 'table' and type(nxt[k]) == 'table' and w.n > nxt[k].n) then nxt[k] = w end
  end
end
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(nxt))
return 1
`;
