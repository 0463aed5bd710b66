import yargs from 'yargs';
import { describe, expect, it } from 'vitest';
import benchCompare from '../../commands/bench/compare.js';
import { OPTIONS } from '../../src/config/index.js';

/** Parse a `bench compare` command line in-process, without running the benchmark. */
async function parseCompare(args: string[]): Promise<Record<string, unknown>> {
  let parsed: Record<string, unknown> = {};
  await yargs(args)
    .command({ ...benchCompare, handler: (argv) => void (parsed = argv as Record<string, unknown>) })
    .strict()
    .exitProcess(false)
    .fail((msg, err) => {
      throw err ?? new Error(msg);
    })
    .parseAsync();
  return parsed;
}

const reserved = new Set(['worker-urls', 'sim-workers', 'sim-rate', 'port', 'host', 'tui']);
const routerFlags = OPTIONS.map((o) => o.flag).filter((f) => !reserved.has(f));

describe('bench compare configurations', () => {
  it.each(routerFlags)('"--%s …" stays one configuration, not a bench flag', async (flag) => {
    const argv = await parseCompare(['compare', `--${flag} 1`, `--${flag}=2`, `--${flag}`, '--json']);
    expect(argv.configurations).toEqual([`--${flag} 1`, `--${flag}=2`, `--${flag}`]);
    expect(argv.json).toBe(true);
  });

  it('an empty configuration means the defaults', async () => {
    expect((await parseCompare(['compare', '', '--policy round_robin'])).configurations).toEqual(['', '--policy round_robin']);
  });
});
