import { describe, it } from 'vitest';
import { installCommand, peerNamed, peerPaths, peerStatus } from '../../scripts/peers.mjs';

/**
 * Tests that need real software outside npm (docs/peers.md): each names its peers, and
 * without one it is skipped with the command that installs it, so `npm test` passes on
 * a machine with only Node. Under ROUTERCTL_PEERS=required (.ci/run) a missing peer
 * fails the test instead.
 */
export const PEERS_REQUIRED = process.env.ROUTERCTL_PEERS === 'required';

export interface PeerHere {
  readonly name: string;
  readonly version: string;
  /** The peer's program (go), venv python and model (python), or commands found (debian). */
  readonly paths: Record<string, string | undefined>;
}

/** A peer that is here at its pin; throws when it is not (use inside describeWithPeers). */
export function peer(name: string): PeerHere {
  const p = peerNamed(name);
  const s = peerStatus(p);
  if (!s.ok) throw new Error(`peer ${name} is missing: ${s.why}; ${installCommand([name])}`);
  return { name, version: s.version, paths: { ...peerPaths(p), ...s.paths } };
}

/** Why these peers cannot be used here, or null when all of them can. */
export function missingPeers(names: readonly string[]): string | null {
  const missing = names.map((n) => ({ n, s: peerStatus(peerNamed(n)) })).filter((x) => !x.s.ok);
  if (missing.length === 0) return null;
  return `needs ${missing.map((x) => `${x.n} (${x.s.why})`).join(', ')}: ${installCommand(missing.map((x) => x.n))}`;
}

/**
 * describe() for tests that need these peers. Without one, the block is skipped and its
 * title says which peer and how to install it; under ROUTERCTL_PEERS=required it holds
 * one failing test saying the same.
 */
export function describeWithPeers(names: readonly string[], title: string, fn: () => void): void {
  const why = missingPeers(names);
  if (why === null) {
    describe(title, fn);
    return;
  }
  if (PEERS_REQUIRED) {
    describe(title, () => {
      it('has the peers it needs (ROUTERCTL_PEERS=required)', () => {
        throw new Error(`missing peer: ${why}`);
      });
    });
    return;
  }
  describe.skip(`${title} [${why}]`, fn);
}
