import { isPeerRouterName, PEER_ROUTER_NAMES } from './peer-routers.js';
import type { PeerRouterName } from './peer-routers.js';
import { splitArgs } from './split-args.js';

/** One router configuration of a comparison: the flags `routerctl serve` gets, or a peer router and its own flags. */
export interface Configuration {
  /** A, B, C…: short names for table columns and chart axes. */
  letter: string;
  /** The flags as the operator would type them; "(defaults)" when there are none; a peer's name first. */
  label: string;
  /** serve's flags; for a peer, the peer's own flags after the ones the benchmark gives it. */
  args: string[];
  /** Another router in this arm instead of routerctl (docs/bench.md §Peer routers as arms). */
  peer?: PeerRouterName;
}

/** Flags the benchmark sets itself for every router it starts. */
const RESERVED = ['--worker-urls', '--sim-workers', '--sim-rate', '--port', '--host', '--tui', '--no-tui', '--config'];

/** Values of a --sweep that mean "leave the flag out", so a sweep can include the default. */
const UNSET = new Set(['off', 'none', 'unset', 'default']);

export class ConfigurationError extends Error {}

/**
 * Build the configurations to compare: each --compare string, then one per point of
 * the --sweep grid (several sweeps multiply), each prefixed by --router-args. A sweep
 * value of `off` leaves its flag out, e.g. worker-queue-limit=off,4,6 compares the
 * gate against no gate.
 */
export function buildConfigurations(compare: readonly string[], sweeps: readonly string[], routerArgs: string): Configuration[] {
  const common = parse(routerArgs, '--router-args');
  const serve = (args: string[]): Omit<Configuration, 'letter'> => ({
    label: args.length === 0 ? '(defaults)' : args.map(quoteWord).join(' '),
    args,
  });
  // A configuration that starts with a peer router's name runs that router instead (docs/bench.md §Peer routers as arms).
  const arms = compare.map((c) => (namesPeer(c) ? parsePeer(c) : serve([...common, ...parse(c, `--compare "${c}"`)])));
  if (sweeps.length > 0) {
    let grid: string[][] = [[]];
    for (const sweep of sweeps) {
      const { flag, values } = parseSweep(sweep);
      grid = grid.flatMap((prefix) => values.map((v) => (UNSET.has(v.toLowerCase()) ? prefix : [...prefix, flag, v])));
    }
    for (const point of grid) arms.push(serve([...common, ...point]));
  }
  if (arms.length > 26) throw new ConfigurationError(`${arms.length} configurations is more than 26; compare fewer at a time`);
  return arms.map((c, i) => ({ letter: String.fromCharCode(65 + i), ...c }));
}

/** Whether a configuration's first word is a peer router's name (serve flags all start with --). */
function namesPeer(text: string): boolean {
  return isPeerRouterName(text.trim().split(/\s+/, 1)[0] ?? '');
}

/**
 * `"smg --disable-worker-overload-protection"`: a peer router's name, then its own
 * flags (the benchmark gives it the workers, the ports and `--policy cache_aware`; a
 * `--policy` here wins).
 */
function parsePeer(text: string): { label: string; args: string[]; peer: PeerRouterName } {
  let words: string[];
  try {
    words = splitArgs(text);
  } catch (err) {
    throw new ConfigurationError(`configuration "${text}": ${(err as Error).message}`);
  }
  const [name, ...args] = words;
  if (name === undefined || !isPeerRouterName(name))
    throw new ConfigurationError(
      `a peer configuration is a peer router's name (${PEER_ROUTER_NAMES.join(', ')}), then its own flags; got "${text}"`,
    );
  for (const w of args) {
    const flag = w.split('=')[0]!;
    if (['--worker-urls', '--host', '--port', '--prometheus-port', '--prometheus-host'].includes(flag))
      throw new ConfigurationError(`configuration "${text}": ${flag} is set by the benchmark; leave it out`);
  }
  return { label: [name, ...args.map(quoteWord)].join(' '), args, peer: name };
}

/** `worker-queue-limit=2,4,6` (or `--worker-queue-limit=…`) → the flag and its values. */
export function parseSweep(sweep: string): { flag: string; values: string[] } {
  const eq = sweep.indexOf('=');
  const name = (eq < 0 ? sweep : sweep.slice(0, eq)).trim().replace(/^--/, '');
  const values =
    eq < 0
      ? []
      : sweep
          .slice(eq + 1)
          .split(',')
          .map((v) => v.trim())
          .filter(Boolean);
  if (!/^[a-z][a-z0-9-]*$/.test(name) || values.length === 0) {
    throw new ConfigurationError(`--sweep takes FLAG=V1,V2,… (e.g. worker-queue-limit=2,4,6), got "${sweep}"`);
  }
  const flag = `--${name}`;
  if (RESERVED.includes(flag)) throw new ConfigurationError(`--sweep cannot vary ${flag}: the benchmark sets it for every router`);
  return { flag, values };
}

function parse(text: string, where: string): string[] {
  let words: string[];
  try {
    words = splitArgs(text);
  } catch (err) {
    throw new ConfigurationError(`${where}: ${(err as Error).message}`);
  }
  for (const w of words) {
    const flag = w.split('=')[0]!;
    if (RESERVED.includes(flag)) throw new ConfigurationError(`${where}: ${flag} is set by the benchmark for every router; leave it out`);
  }
  return words;
}

function quoteWord(w: string): string {
  return /^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`;
}
