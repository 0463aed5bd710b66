import { didYouMean, numberAtLeast, numberGreaterThan, wholeNumberAtLeast } from '../../cli/index.js';
import { usageError } from '../../errors/index.js';
import { GSP_DEFAULTS } from '../../workload/defaults/index.js';
import type { GspOptions } from '../../workload/defaults/index.js';

// A generated workload's knobs are one flag of KEY=VALUE pairs (`--chat sessions=64,turns=2`,
// `--gsp num-groups=4`), so `bench run` and `bench compare` stay under 30 flags each
// (docs/bench.md §Workloads); the keys are the flags' old names, SGLang's without `gsp-`.

/** The synthetic chat workload's knobs, as `--chat` spells them. */
export interface ChatKnobs {
  sessions: number;
  families: number;
  zipf: number;
  'system-tokens': string;
  turns: number;
  'output-tokens': number;
  'max-output-tokens': number;
  burst: string;
}

export const CHAT_DEFAULTS: Readonly<ChatKnobs> = {
  sessions: 128,
  families: 16,
  zipf: 1.1,
  'system-tokens': '1000-4000',
  turns: 4,
  'output-tokens': 48,
  'max-output-tokens': 128,
  burst: '3x3s/15s',
};

/** SGLang generated-shared-prefix knobs, as `--gsp` spells them (bench_serving's names without `gsp-`). */
export type GspKnobs = Omit<GspOptions, 'rate' | 'seed'>;

type Reader = (value: string) => unknown;

function numeric(check: (v: number) => number): Reader {
  return (value) => check(value.trim() === '' ? NaN : Number(value));
}

const CHAT_READERS: Record<keyof ChatKnobs, Reader> = {
  sessions: numeric(wholeNumberAtLeast('chat sessions', 1)),
  families: numeric(wholeNumberAtLeast('chat families', 1)),
  zipf: numeric(numberAtLeast('chat zipf', 0)),
  'system-tokens': (v) => v,
  turns: numeric(wholeNumberAtLeast('chat turns', 1)),
  'output-tokens': numeric(wholeNumberAtLeast('chat output-tokens', 1)),
  'max-output-tokens': numeric(wholeNumberAtLeast('chat max-output-tokens', 1)),
  burst: (v) => v,
};

function boolean(flag: string): Reader {
  return (value) => {
    if (value === '' || value === 'true') return true;
    if (value === 'false') return false;
    throw usageError(`--${flag} takes true or false (got '${value}')`);
  };
}

function choice<C extends string>(flag: string, choices: readonly C[]): Reader {
  return (value) => {
    if ((choices as readonly string[]).includes(value)) return value;
    throw usageError(`--${flag} takes ${choices.join(' or ')} (got '${value}')`);
  };
}

/** bench_serving's key, and where it lands in GspOptions. */
const GSP_KEYS: Record<string, [field: keyof GspKnobs, read: Reader]> = {
  'num-groups': ['numGroups', numeric(wholeNumberAtLeast('gsp num-groups', 1))],
  'prompts-per-group': ['promptsPerGroup', numeric(wholeNumberAtLeast('gsp prompts-per-group', 1))],
  'system-prompt-len': ['systemPromptLen', numeric(wholeNumberAtLeast('gsp system-prompt-len', 1))],
  'question-len': ['questionLen', numeric(wholeNumberAtLeast('gsp question-len', 1))],
  'output-len': ['outputLen', numeric(wholeNumberAtLeast('gsp output-len', 1))],
  'range-ratio': [
    'rangeRatio',
    (value) => {
      const v = value.trim() === '' ? NaN : Number(value);
      if (!(v > 0 && v <= 1)) throw usageError(`--gsp range-ratio takes a number in (0, 1] (got ${value})`);
      return v;
    },
  ],
  'num-turns': ['numTurns', numeric(wholeNumberAtLeast('gsp num-turns', 1))],
  'group-distribution': ['groupDistribution', choice('gsp group-distribution', ['uniform', 'zipf'] as const)],
  'zipf-alpha': ['zipfAlpha', numeric(numberGreaterThan('gsp zipf-alpha', 0))],
  ordered: ['ordered', boolean('gsp ordered')],
};

/** The KEY=VALUE pairs of every occurrence of a spec flag, in order (a later key wins). */
function pairs(flag: string, words: readonly (string | number)[], keys: readonly string[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const word of words) {
    for (const item of String(word).split(',')) {
      if (item.trim() === '') continue;
      const eq = item.indexOf('=');
      const key = (eq < 0 ? item : item.slice(0, eq)).trim();
      if (!keys.includes(key)) {
        const guess = didYouMean(key, keys);
        throw usageError(
          `--${flag} has no key '${key}'${guess ? `; did you mean '${guess}'?` : ''} (keys: ${keys.join(', ')}; KEY=VALUE, comma-separated)`,
        );
      }
      out.push([key, eq < 0 ? '' : item.slice(eq + 1).trim()]);
    }
  }
  return out;
}

/** `--chat KEY=VALUE,...` over the chat workload's defaults; a yargs coercer. */
export function parseChatSpec(words: readonly (string | number)[]): ChatKnobs {
  const knobs: ChatKnobs = { ...CHAT_DEFAULTS };
  for (const [key, value] of pairs('chat', words, Object.keys(CHAT_READERS))) {
    (knobs as unknown as Record<string, unknown>)[key] = CHAT_READERS[key as keyof ChatKnobs](value);
  }
  return knobs;
}

/** `--gsp KEY=VALUE,...` over bench_serving's defaults; a yargs coercer. */
export function parseGspSpec(words: readonly (string | number)[]): GspKnobs {
  const knobs: GspKnobs = { ...GSP_DEFAULTS };
  for (const [key, value] of pairs('gsp', words, Object.keys(GSP_KEYS))) {
    const [field, read] = GSP_KEYS[key]!;
    (knobs as unknown as Record<string, unknown>)[field] = read(value);
  }
  return knobs;
}

const CHAT_MEANINGS: Record<keyof ChatKnobs, string> = {
  sessions: 'conversations open at once',
  families: 'system prompts',
  zipf: 'Zipf exponent of their popularity, 0 uniform',
  'system-tokens': 'MIN-MAX tokens of a system prompt',
  turns: 'most turns in a session',
  'output-tokens': 'median max_tokens (lognormal, sigma 0.5)',
  'max-output-tokens': 'cap on max_tokens',
  burst: 'FACTORxSECONDS/PERIOD rate bursts, or off',
};

const GSP_MEANINGS: Record<string, string> = {
  'num-groups': 'system prompt groups',
  'prompts-per-group': 'prompts (conversations) per group',
  'system-prompt-len': 'system prompt tokens',
  'question-len': 'question tokens',
  'output-len': 'output tokens',
  'range-ratio': 'lengths drawn from [L × ratio, L]',
  'num-turns': 'turns per conversation',
  'group-distribution': 'uniform or zipf',
  'zipf-alpha': 'with zipf: P(group g) ∝ 1/(g+1)^alpha',
  ordered: 'group order instead of shuffled',
};

/** Each key with its default and meaning, for --help and the man page. */
export const CHAT_SPEC_HELP = (Object.keys(CHAT_MEANINGS) as Array<keyof ChatKnobs>)
  .map((k) => `${k}=${String(CHAT_DEFAULTS[k])} (${CHAT_MEANINGS[k]})`)
  .join(', ');

export const GSP_SPEC_HELP = Object.entries(GSP_KEYS)
  .map(([key, [field]]) => `${key}${GSP_DEFAULTS[field] === undefined ? '' : `=${String(GSP_DEFAULTS[field])}`} (${GSP_MEANINGS[key]})`)
  .join(', ');

/** The keys each spec takes, for messages and the argv rewrite of the old flags. */
export const CHAT_KEYS: readonly string[] = Object.keys(CHAT_READERS);
export const GSP_SPEC_KEYS: readonly string[] = Object.keys(GSP_KEYS);
