import type { FleetView } from '../fleet/index.js';
import { fmtAge, fmtRate } from '../fleet/index.js';
import type { Tone } from './components/Line.js';

/**
 * all_queued episodes, latched: a saturated fleet often flips in and out of
 * all_queued from one sample to the next, and a banner that flashes is read as noise.
 * The banner stays while the episode lasts and says how long and how often; for a
 * minute after it clears, a quieter line says when it last happened.
 */
export interface AlertLatch {
  active: boolean;
  /** Start of the current (or last) episode, wall-clock ms. */
  since: number | null;
  /** When it was last seen active. */
  lastSeen: number | null;
  episodes: number;
}

export const NO_LATCH: AlertLatch = { active: false, since: null, lastSeen: null, episodes: 0 };
export const LATCH_HOLD_MS = 60_000;

export function nextLatch(prev: AlertLatch, view: FleetView | undefined, now: number): AlertLatch {
  if (!view) return prev;
  const saturated = view.alerts.allQueued === true || view.alerts.allQueuedInferred;
  if (saturated) {
    if (prev.active) return { ...prev, lastSeen: now };
    return { active: true, since: now, lastSeen: now, episodes: prev.episodes + 1 };
  }
  return prev.active ? { ...prev, active: false } : prev;
}

export interface Banner {
  text: string;
  tone: Tone;
  /** Loud banners are drawn inverse (a block of colour); quiet ones as plain coloured text. */
  loud: boolean;
}

export function bannersFor(view: FleetView | undefined, latch: AlertLatch, now: number): Banner[] {
  if (!view) return [];
  const out: Banner[] = [];
  const times = latch.episodes > 1 ? ` · ${latch.episodes} episodes` : '';
  if (view.alerts.allQueued === true) {
    out.push({
      tone: 'red',
      loud: true,
      // How long comes first: on a narrow terminal the end of the line is cut.
      text: ` FLEET SATURATED${latch.since !== null ? ` for ${fmtAge(now - latch.since)}` : ''}${times}  nothing is diverted (REJ/s are kept on their owner): every worker is at or over the queue limit (all_queued) `,
    });
  } else if (view.alerts.allQueuedInferred) {
    out.push({
      tone: 'red',
      loud: true,
      text: ` FLEET SATURATED  all_queued decisions at ${fmtRate(view.decisionsPerS?.all_queued)}/s (inferred from the decision counters; this source has no saturation alert)${times} `,
    });
  } else if (latch.lastSeen !== null && now - latch.lastSeen < LATCH_HOLD_MS) {
    out.push({
      tone: 'yellow',
      loud: false,
      text: `all_queued cleared ${fmtAge(now - latch.lastSeen)} ago (${latch.episodes} episode${latch.episodes === 1 ? '' : 's'} this session)`,
    });
  }
  const notes = view.prefixIndex.notes;
  if (notes.length > 0) {
    // Quiet: an incomplete index costs cache hits, not availability.
    out.push({
      tone: 'yellow',
      loud: false,
      text: `KV index incomplete · ${notes[0]}${notes.length > 1 ? ` (+${notes.length - 1} more: top --once lists them)` : ''}`,
    });
  }
  if (view.alerts.gateInert === true) {
    out.push({
      tone: 'yellow',
      loud: true,
      text: " GATE INERT  --worker-queue-limit is set but no worker has a fresh load sample: the gate admits everyone. Check the engines' load endpoints ",
    });
  }
  return out;
}
