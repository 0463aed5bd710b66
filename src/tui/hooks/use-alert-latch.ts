import { useRef } from 'react';
import type { FleetView } from '../../fleet/index.js';
import { NO_LATCH, nextLatch } from '../banners.js';
import type { AlertLatch } from '../banners.js';

/** Track all_queued episodes across fleet views (see banners.ts); advances once per new view. */
export function useAlertLatch(view: FleetView | undefined, now: number): AlertLatch {
  const latch = useRef<AlertLatch>(NO_LATCH);
  const last = useRef<FleetView | undefined>(undefined);
  if (view !== last.current) {
    last.current = view;
    latch.current = nextLatch(latch.current, view, now);
  }
  return latch.current;
}
