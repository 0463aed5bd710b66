import { replicaState } from '../fleet/index.js';
import type { FleetView } from '../fleet/index.js';

/**
 * `top --once`'s exit statuses beyond the CLI's own (0 success, 1 a coded error, 2
 * usage; src/errors): 3 when the table printed but some replica is draining or down,
 * so a script or a probe can tell a whole fleet view from a partial one without
 * parsing it. None answering is not a status here: it is the first replica's error
 * (RCTL_E_UNREACHABLE and the like), exit 1 (man routerctl-top, EXIT STATUS).
 */
export const TOP_EXIT = {
  ALL_UP: 0,
  SOME_NOT_UP: 3,
} as const;

export function onceExitStatus(view: FleetView): number {
  return view.replicas.every((r) => replicaState(r) === 'up') ? TOP_EXIT.ALL_UP : TOP_EXIT.SOME_NOT_UP;
}
