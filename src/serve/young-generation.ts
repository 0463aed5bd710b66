import { setFlagsFromString } from 'node:v8';

/** The node option that keeps V8's default for the router's process. */
export const KEEP_PRETENURING = '--allocation-site-pretenuring';

/**
 * Turns off V8's allocation-site pretenuring in the router's process, unless node was
 * started with `--allocation-site-pretenuring`. Returns whether it did.
 *
 * Why (docs/dependencies.md §Pretenuring and the request path): V8 allocates straight
 * into the old generation from any allocation site whose objects mostly outlived a
 * scavenge. Behind a large fleet the background keeps the young generation full of
 * survivors, and a few of node's HTTP request objects once counted as such are enough:
 * their sites turn old, dead old request objects then hold their young neighbours
 * through the next scavenge, those sites follow, and from then on every object of every
 * request is promoted. A router process at 4,096 workers settled that way in about
 * half its starts, with scavenges 4-5 times as long and a p99 3-4 times as high.
 * Pretenuring only saves copying objects that live long, and the router's long-lived
 * state is built once, at start or on a membership change.
 */
export function keepRequestsYoung(execArgv: readonly string[] = process.execArgv): boolean {
  if (execArgv.includes(KEEP_PRETENURING)) return false;
  setFlagsFromString('--no-allocation-site-pretenuring');
  return true;
}
