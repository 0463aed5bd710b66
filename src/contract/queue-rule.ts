/**
 * The queue gate's rule, as the router applies it and publishes it (`gated` in
 * /admin/state) and as the console shows it: a worker whose engine reports `limit` or
 * more waiting requests is queued (docs/routing.md §Queue gate). `null` is "no limit
 * set": nothing is queued. Only a fresh engine-reported waiting count may be passed in;
 * freshness is the caller's to judge.
 */
export function isQueued(waiting: number, limit: number | null): boolean {
  return limit !== null && waiting >= limit;
}

/**
 * The saturation pin's rule: a fresh worker waiting below --saturation-queue-floor
 * still has room (docs/routing.md §Saturation pin). `null`: no floor set, so none is.
 */
export function isBelowFloor(waiting: number, floor: number | null): boolean {
  return floor !== null && waiting < floor;
}
