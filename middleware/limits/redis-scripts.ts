/**
 * The Lua scripts of the Redis store. Each runs atomically in Redis, so an admission's checks and takes, a
 * release, or a renewal cannot interleave with another replica's. Times are Redis server time (TIME), so the
 * replicas' clocks do not matter.
 * @see docs/middleware/limits.md
 */
import { script } from '../../core/redis-script.js';

/** `now`, Redis server time in ms. */
const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/**
 * Take a slot of the sorted set `k` (members are tokens scored by their expiry) unless `limit` live slots are
 * taken: 0 then, 1 for a slot taken, 2 for the last free one (the set is full with it). Lapsed slots are dropped
 * only when the set looks full: a lapsed slot counts only until then, so a set never grows past `limit` members.
 * The key's expiry stays at or after its latest slot's: when less than a lease is left, it moves to two leases
 * from now, so that an admission usually pays one PTTL for it.
 */
const TAKE = `
local function take(k, limit, lease, token)
  local n = redis.call('ZCARD', k)
  if n >= limit then
    redis.call('ZREMRANGEBYSCORE', k, '-inf', now)
    n = redis.call('ZCARD', k)
    if n >= limit then return 0 end
  end
  redis.call('ZADD', k, now + lease, token)
  if redis.call('PTTL', k) < lease then redis.call('PEXPIRE', k, lease * 2) end
  return n + 1 >= limit and 2 or 1
end
`;

/**
 * Admissions, in the order given (the requests of one turn: see turn-batch.ts). Each checks the budget, a user
 * slot, a global slot and one request of the minute window, in order; the first refusal ends its checks and gives
 * back the slots it took. A check whose limit is 0 is off (its key is not touched), and so is the budget check of
an admission that skips it (a task's own request). A refused request still counts
 * in the minute window, as in memory. Each admission sees what the ones before it took. The request that opens a
 * minute window gives its key the window's expiry; a refusal, or the admission of the window's last request,
 * gives one to a key found without it.
 * KEYS, four per admission: budget, user slots, global slots, minute window (one hash slot in a cluster: there
 * the global check is off and runs apart). ARGV budget limit, rpm limit, rpm window ms, lease ms, then four per
 * admission: user limit, global limit, token, budget checked (1/0). Returns four numbers per admission: {0, user slot, global slot,
 * last}, the slots each 0 (not taken), 1 (taken) or 2 (the last free one taken), `last` the ms before the
 * minute window ends when the admission took its last request (0 otherwise: the PTTL is asked only then); or
 * {refusal, ms before the window ends, 0, 0}: 1 budget, 2 user, 3 global, 4 rpm.
 */
export const ADMIT = script(`${NOW}${TAKE}
local budget, rpm = tonumber(ARGV[1]), tonumber(ARGV[2])
local window, lease = tonumber(ARGV[3]), tonumber(ARGV[4])
local function msLeft(kr)
  local ttl = redis.call('PTTL', kr)
  if ttl < 0 then
    ttl = window
    redis.call('PEXPIRE', kr, ttl)
  end
  return ttl
end
local function admit(kb, ku, kg, kr, user, global, token, checked)
  if budget > 0 and checked then
    local used = tonumber(redis.call('GET', kb) or '0')
    if used >= budget then return 1, math.max(redis.call('PTTL', kb), 1) end
  end
  local u, g = 0, 0
  if user > 0 then
    u = take(ku, user, lease, token)
    if u == 0 then return 2, 0 end
  end
  if global > 0 then
    g = take(kg, global, lease, token)
    if g == 0 then
      if user > 0 then redis.call('ZREM', ku, token) end
      return 3, 0
    end
  end
  local last = 0
  if rpm > 0 then
    local n = redis.call('INCR', kr)
    if n == 1 then redis.call('PEXPIRE', kr, window) end
    if n > rpm then
      if user > 0 then redis.call('ZREM', ku, token) end
      if global > 0 then redis.call('ZREM', kg, token) end
      return 4, msLeft(kr)
    end
    if n == rpm then last = n == 1 and window or msLeft(kr) end
  end
  return 0, u, g, last
end
local out = {}
for i = 0, #KEYS / 4 - 1 do
  local k, a = i * 4, 4 + i * 4
  local code, x, y, z = admit(KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[k + 4],
    tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), ARGV[a + 3], ARGV[a + 4] == '1')
  out[#out + 1] = code
  out[#out + 1] = x
  out[#out + 1] = y or 0
  out[#out + 1] = z or 0
end
return out
`);

/**
 * Releases, in the order given (the requests of one turn): give back the slots of each token and add its work
 * to the budget, opening the budget's window when none is open.
 * KEYS, three per release: budget, user slots, global slots (one hash slot in a cluster). ARGV budget window
 * ms, then four per release: token, user held (1/0), global held, work ms.
 */
export const RELEASE = script(`
local window = tonumber(ARGV[1])
for i = 0, #KEYS / 3 - 1 do
  local k, a = i * 3, 1 + i * 4
  local token = ARGV[a + 1]
  if ARGV[a + 2] == '1' then redis.call('ZREM', KEYS[k + 2], token) end
  if ARGV[a + 3] == '1' then redis.call('ZREM', KEYS[k + 3], token) end
  local ms = tonumber(ARGV[a + 4])
  if ms > 0 then
    redis.call('INCRBY', KEYS[k + 1], ms)
    if redis.call('PTTL', KEYS[k + 1]) < 0 then redis.call('PEXPIRE', KEYS[k + 1], window) end
  end
end
return 1
`);

/**
 * A cluster's global check, apart from the user's. KEYS the global slots; ARGV limit, lease ms, token. Returns
 * 0 (refused), 1 (taken) or 2 (the last free slot taken).
 */
export const ACQUIRE = script(`${NOW}${TAKE}
return take(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3])
`);

/**
 * A cluster's global check refused after the user's admitted: give back the user slot and the request counted
 * in the minute window (a window it opened goes with it). KEYS user slots, minute window; ARGV token, user
 * held (1/0), rpm on (1/0).
 */
export const GIVE_BACK = script(`
if ARGV[2] == '1' then redis.call('ZREM', KEYS[1], ARGV[1]) end
if ARGV[3] == '1' and redis.call('EXISTS', KEYS[2]) == 1 then
  if redis.call('DECR', KEYS[2]) <= 0 then redis.call('DEL', KEYS[2]) end
end
return 1
`);

/**
 * Renew our live slots (XX: a slot that already lapsed or was released is not brought back), drop lapsed ones,
 * and move the key's expiry to its latest slot.
 * KEYS[1] the slot set; ARGV lease in ms, then the tokens. Returns the set's size.
 */
export const RENEW = script(`${NOW}
local exp = now + tonumber(ARGV[1])
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], 'XX', exp, ARGV[i]) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if last[2] then redis.call('PEXPIREAT', KEYS[1], last[2]) end
return redis.call('ZCARD', KEYS[1])
`);
