import { useMemo, useRef } from 'react';
import type { FleetView } from '../../fleet/index.js';
import { HistoryBuffers, sampleOf } from '../history.js';
import type { HistorySeries } from '../history.js';

/**
 * Record one history sample per new fleet view (never per render: Ink re-renders on
 * keys and resizes too) and return the series for the charts. It keeps recording
 * while the console is paused; freezing what is drawn is the caller's business.
 */
export function useHistory(view: FleetView | undefined, capacity = 512): HistorySeries {
  const buffers = useRef<HistoryBuffers | null>(null);
  const last = useRef<FleetView | undefined>(undefined);
  buffers.current ??= new HistoryBuffers(capacity);
  if (view && view !== last.current) {
    last.current = view;
    buffers.current.push(sampleOf(view));
  }
  // eslint-disable-next-line react-hooks/exhaustive-deps
  return useMemo(() => buffers.current!.series(), [view]);
}
