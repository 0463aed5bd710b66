import { installCommand, PEERS, peerStatus, readManifest } from '../../scripts/peers.mjs';

/**
 * Vitest global setup: the run starts by saying which real peers it runs against, at
 * which versions, and ends with one line per missing peer and the command that
 * installs it (docs/peers.md). Printed from here rather than by a reporter, since
 * .ci/run names its reporters on the command line.
 */
export default function setup(): () => void {
  const manifest = readManifest();
  const rows = PEERS.map((p) => ({ p, s: peerStatus(p, manifest) }));
  const here = rows.filter((r) => r.s.ok).map((r) => `${r.p.name} ${r.s.version}`);
  const missing = rows.filter((r) => !r.s.ok);
  console.log(`peers: ${here.length > 0 ? here.join('; ') : 'none'}`);
  return () => {
    if (missing.length === 0) return;
    console.log(`\npeers missing: the tests that need them were ${process.env.ROUTERCTL_PEERS === 'required' ? 'FAILED' : 'skipped'}`);
    for (const { p, s } of missing)
      console.log(`  ${p.name}${p.benchmarksOnly ? ' (benchmarks only)' : ''}: ${s.why}; ${installCommand([p.name])}`);
  };
}
