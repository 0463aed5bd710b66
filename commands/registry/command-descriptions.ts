/**
 * Each command's one line in `routerctl --help` (false: internal, not listed), apart
 * from its module: command-list.ts builds the list yargs shows and matches from these
 * alone, so that no command's option table loads until that command is the one run.
 */
export const COMMAND_DESCRIPTIONS = {
  serve: 'Run the router (and, on a terminal, its live console); without --worker-urls, on a simulated fleet',
  top: "Live console for a running router (routerctl's admin API, or any router's Prometheus /metrics)",
  explain: 'Why did a request go where it went: one decision as a story, or every decision as it happens',
  doctor:
    "Where the cached tokens went: a hit-rate breakdown from the router's decision records, with one finding and setting per large loss",
  'check-config': 'Validate flags, environment and rc file exactly as serve would, without starting anything',
  sim: 'Run simulated SGLang/vLLM engines on loopback for any router to use',
  bench: 'Drive a workload at a router, compare router configurations on identical simulated fleets, or capture a trace',
  'embedded-fleet': false,
} as const satisfies Record<string, string | false>;
