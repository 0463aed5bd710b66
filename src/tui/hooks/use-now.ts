import { useEffect, useReducer } from 'react';

/**
 * Wall-clock ms at render time, plus a re-render every `everyMs` once `version` (the
 * data) stops changing, so ages ("updated 3.2s ago") keep counting when the stream
 * stalls, which is exactly when they matter. While data flows, every new version
 * restarts the timer and no extra frame is drawn: a frame costs the console tens of
 * milliseconds of Ink's output stage, and on a router's own machine that is CPU the
 * router could use. `fixed` pins the clock (tests).
 */
export function useNow(everyMs: number, fixed?: number, version?: unknown): number {
  const [, tick] = useReducer((n: number) => n + 1, 0);
  useEffect(() => {
    if (fixed !== undefined) return;
    const t = setInterval(tick, everyMs);
    return () => clearInterval(t);
  }, [everyMs, fixed, version]);
  return fixed ?? Date.now();
}
