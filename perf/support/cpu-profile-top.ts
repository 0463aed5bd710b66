/**
 * A V8 CPU profile's (`node --cpu-prof`) self times by function, heaviest first,
 * optionally over part of the run only: `--from` and `--to` are CLOCK_MONOTONIC
 * microseconds (what `process.hrtime.bigint() / 1000n` reads, the profile's own clock
 * on Linux), so a benchmark can record when its measuring windows ran and leave the
 * router's start-up out. Both also print in `--windows` form: a file of
 * `from to` lines (fleet-push --profile writes one beside the profile).
 *
 *   node dist/perf/support/cpu-profile-top.js FILE.cpuprofile [--windows FILE] [--top 25]
 */
import { readFileSync } from 'node:fs';
import { benchArg } from './args.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface SelfTime {
  readonly name: string;
  readonly ms: number;
  readonly pct: number;
}

/** Self time per function (name and place), over the samples whose time is in one of `spans` (all when empty). */
export function selfTimes(profile: CpuProfile, spans: ReadonlyArray<readonly [number, number]>): { total: number; rows: SelfTime[] } {
  const byId = new Map<number, ProfileNode>();
  for (const n of profile.nodes) byId.set(n.id, n);
  const self = new Map<string, number>();
  let t = profile.startTime;
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i] ?? 0;
    t += dt;
    if (spans.length > 0 && !spans.some(([a, b]) => t >= a && t <= b)) continue;
    // A sample stands for the time until the next one.
    const weight = profile.timeDeltas[i + 1] ?? 0;
    const f = byId.get(profile.samples[i]!)!.callFrame;
    const where = f.url === '' ? '' : ` ${f.url.replace(/^.*\/(dist|node_modules)\//, '$1/')}:${f.lineNumber + 1}`;
    const key = `${f.functionName || '(anonymous)'}${where}`;
    self.set(key, (self.get(key) ?? 0) + weight);
    total += weight;
  }
  const rows = [...self.entries()]
    .map(([name, us]) => ({ name, ms: us / 1000, pct: (100 * us) / Math.max(1, total) }))
    .sort((a, b) => b.ms - a.ms);
  return { total: total / 1000, rows };
}

if (process.argv[1]?.endsWith('cpu-profile-top.js')) {
  const file = process.argv[2];
  if (file === undefined) throw new Error('usage: cpu-profile-top FILE.cpuprofile [--windows FILE] [--top N]');
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const windowsFile = benchArg('windows', '');
  const spans =
    windowsFile === ''
      ? []
      : readFileSync(windowsFile, 'utf8')
          .trim()
          .split('\n')
          .map((l) => l.split(' ').map(Number) as [number, number]);
  const top = Number(benchArg('top', '25'));
  const { total, rows } = selfTimes(profile, spans);
  const wall = spans.length === 0 ? (profile.endTime - profile.startTime) / 1000 : spans.reduce((s, [a, b]) => s + (b - a) / 1000, 0);
  console.log(`${(total / 1000).toFixed(2)} s sampled over ${(wall / 1000).toFixed(1)} s of wall time (idle included)`);
  console.log('| self ms | % of samples | function |');
  console.log('|---:|---:|---|');
  for (const r of rows.slice(0, top)) console.log(`| ${r.ms.toFixed(0)} | ${r.pct.toFixed(1)} | ${r.name} |`);
}
