/**
 * The Lua scripts that make a read-merge-write one atomic step in Redis. Each runs as one
 * command (EVALSHA), so two routers writing at once never lose either's news.
 */

/**
 * Compare-and-set of a hash field: the routers merge a shared value themselves (only they can check
 * its signature, src/store/signedValues.ts) and write the result only when the field still holds what
 * they read. KEYS[1] hash, ARGV[1] field, ARGV[2] '1' when a value was read ('0': absent), ARGV[3]
 * the value read, ARGV[4] the new value ('' deletes the field). Returns 1 when done, 0 when the field changed meanwhile.
 */
export const SWAP_FIELD = `
local old = redis.call('HGET', KEYS[1], ARGV[1])
if (ARGV[2] == '1' and old ~= ARGV[3]) or (ARGV[2] == '0' and old) then return 0 end
if ARGV[4] == '' then redis.call('HDEL', KEYS[1], ARGV[1]) else redis.call('HSET', KEYS[1], ARGV[1], ARGV[4]) end
return 1
`;

/**
 * Compare-and-set of a key, as {@link SWAP_FIELD}: KEYS[1] key, ARGV[1] '1' when a value was read,
 * ARGV[2] the value read, ARGV[3] the new value, ARGV[4] its time to live, ms. Returns 1 when written, 0 when it changed meanwhile.
 */
export const SWAP_KEY = `
local old = redis.call('GET', KEYS[1])
if (ARGV[1] == '1' and old ~= ARGV[2]) or (ARGV[1] == '0' and old) then return 0 end
redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[4])
return 1
`;

/**
 * Sets a key with a time to live, as its own command (not auto-pipelined: it leaves in the tick it is
 * sent). KEYS[1] key, ARGV[1] value, ARGV[2] time to live, ms. Returns 1.
 */
export const SET_NOW = `
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
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
