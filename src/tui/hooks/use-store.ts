import { useSyncExternalStore } from 'react';

import type { Store } from '../../fleet/index.js';

export type { Store };

/** Subscribe a component to a store that changes outside React (a data feed, a child process). */
export function useStore<T>(store: Store<T>): T {
  return useSyncExternalStore(store.subscribe, store.get, store.get);
}

/** A store that never changes, for tests and for callers without a live source. */
export function constantStore<T>(value: T): Store<T> {
  return { get: () => value, subscribe: () => () => {} };
}
