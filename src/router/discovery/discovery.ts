/** What a discovery changes: the router's fleet. */
export interface DiscoveredFleet {
  urls(): readonly string[];
  add(url: string): void;
  remove(url: string): void;
}

/** The discovery modes that can own membership; `/admin/workers` names the one that does (docs/http-edge.md §Membership). */
export type DiscoveryMode = 'dns' | 'kubernetes';

/**
 * A source of the fleet that changes it at runtime (docs/http-edge.md §DNS discovery,
 * §Kubernetes discovery). `start()` settles once the fleet at start is applied, so it
 * is introspected with the rest of the start; later changes join and leave.
 */
export interface Discovery {
  readonly mode: DiscoveryMode;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** The fleet as it is asked for now: the difference is removed and added, leaving the rest alone. */
export function applyFleet(fleet: DiscoveredFleet, urls: Iterable<string>): void {
  const wanted = new Set(urls);
  const have = new Set(fleet.urls());
  for (const url of have) if (!wanted.has(url)) fleet.remove(url);
  for (const url of wanted) if (!have.has(url)) fleet.add(url);
}
