import { execFile } from 'node:child_process';
import type { Configuration } from './configurations.js';
import { ConfigurationError } from './configurations.js';
import { peerRouterProgram } from './peer-routers.js';
import { routerctlBin } from './routerctl-bin.js';

/** The settings of a configuration that explain its results, as serve will resolve them. */
export interface EffectiveSettings {
  policy: string;
  worker_queue_limit: number | null;
  saturation_queue_floor: number | null;
  min_load_choices: number;
}

interface CheckReport {
  valid: boolean;
  errors: Array<{ message: string }>;
  config: Record<string, unknown>;
}

/**
 * Run `routerctl check-config` on every configuration before any fleet starts, so a
 * typo in the fourth configuration fails in a second rather than after three runs.
 * The same validator, environment and rc file as the routers the benchmark starts.
 */
export async function checkConfigurations(configs: readonly Configuration[], workers: number): Promise<EffectiveSettings[]> {
  // Placeholder workers: check-config does not contact them without --probe, but cross-flag rules see a fleet.
  const urls = Array.from({ length: workers }, (_, i) => `http://127.0.0.1:${i + 1}`);
  return Promise.all(
    configs.map(async (c) => {
      if (c.peer !== undefined) {
        if (peerRouterProgram(c.peer) === undefined)
          throw new ConfigurationError(
            `configuration ${c.letter} (${c.label}): ${c.peer} is not installed: npm run peers -- install ${c.peer}, or pip install ${c.peer}`,
          );
        // A peer's settings are its own: its policy as given, and no routerctl gate.
        const at = c.args.indexOf('--policy');
        return {
          policy: at >= 0 ? (c.args[at + 1] ?? 'cache_aware') : 'cache_aware',
          worker_queue_limit: null,
          saturation_queue_floor: null,
          min_load_choices: 2,
        };
      }
      const report = await runCheck([...c.args, '--worker-urls', ...urls]);
      if (!report.valid) {
        throw new ConfigurationError(`configuration ${c.letter} (${c.label}): ${report.errors[0]?.message ?? 'invalid'}`);
      }
      const k = report.config;
      return {
        policy: String(k.policy),
        worker_queue_limit: typeof k['worker-queue-limit'] === 'number' ? k['worker-queue-limit'] : null,
        saturation_queue_floor: typeof k['saturation-queue-floor'] === 'number' ? k['saturation-queue-floor'] : null,
        min_load_choices: typeof k['min-load-choices'] === 'number' ? k['min-load-choices'] : 2,
      };
    }),
  );
}

function runCheck(args: string[]): Promise<CheckReport> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [routerctlBin(), 'check-config', '--json', ...args],
      { env: { ...process.env, NO_COLOR: '1' }, timeout: 15_000, maxBuffer: 4 * 1024 * 1024 },
      (err, stdout, stderr) => {
        try {
          resolve(JSON.parse(stdout) as CheckReport);
        } catch {
          // Not JSON: yargs refused the words before the validator ran (exit 2, one line on stderr).
          const line = stderr.split('\n').find((l) => l.trim()) ?? (err as Error | null)?.message ?? 'check-config failed';
          resolve({ valid: false, errors: [{ message: line.replace(/^error \S+: /, '') }], config: {} });
        }
      },
    );
  });
}
