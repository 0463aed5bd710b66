import { CHAT_KEYS, GSP_SPEC_KEYS } from './workload-spec.js';

/**
 * The `routerctl bench` spellings before the subcommands (docs/bench.md §Old forms), turned
 * into the new ones for one release: `bench --url …` is `bench run --url …`, `bench
 * --compare …`/`--sweep` is `bench compare …`, `bench --capture FILE --url …` is `bench
 * capture FILE --url …`, a trace or gsp run without `--compare` is `bench run`, and the
 * chat and gsp knobs' own flags (`--sessions 64`, `--gsp-num-groups 4`) are `--chat
 * sessions=64` and `--gsp num-groups=4`. `notice` names the new form in one line; argv
 * is returned as is when nothing old is in it.
 */
export function rewriteLegacyBench(argv: readonly string[]): { argv: string[]; notice: string | undefined } {
  const at = argv.findIndex((w) => !w.startsWith('-'));
  if (at < 0 || argv[at] !== 'bench') return { argv: [...argv], notice: undefined };
  const head = argv.slice(0, at + 1);
  let rest = argv.slice(at + 1);
  const renames: string[] = [];

  let sub: string | undefined = SUBCOMMANDS.has(rest[0] ?? '') ? rest[0] : undefined;
  if (sub !== undefined) rest = rest.slice(1);
  else {
    const has = (flag: string): boolean => rest.some((w) => w === `--${flag}` || w.startsWith(`--${flag}=`));
    if (has('capture')) {
      sub = 'capture';
      const i = rest.findIndex((w) => w === '--capture' || w.startsWith('--capture='));
      const file = rest[i]!.startsWith('--capture=') ? [rest[i]!.slice('--capture='.length)] : rest.slice(i + 1, i + 2);
      rest = [...file, ...rest.slice(0, i), ...rest.slice(i + 1 + (rest[i] === '--capture' ? 1 : 0))];
      renames.push(`'bench --capture FILE' is now 'bench capture FILE'`);
    } else if (has('compare') || has('sweep')) {
      // `bench compare` keeps a hidden --compare for this, so the words parse exactly as before.
      sub = 'compare';
      renames.push(has('compare') ? `'bench --compare' is now 'bench compare'` : `'bench --sweep' is now 'bench compare --sweep'`);
    } else {
      const mode = RUN_MODE_FLAGS.find(has);
      if (mode !== undefined) {
        sub = 'run';
        renames.push(`'bench --${mode}' is now 'bench run --${mode}'`);
      }
    }
  }

  const knobs = foldKnobs(rest);
  renames.push(...knobs.renames);
  if (renames.length === 0) return { argv: [...argv], notice: undefined };
  const notice =
    `routerctl: ${renames.join('; ')}; ` +
    (renames.length === 1 ? 'the old form goes in the next release' : 'the old forms go in the next release');
  return { argv: [...head, ...(sub === undefined ? [] : [sub]), ...knobs.words], notice };
}

const SUBCOMMANDS = new Set(['run', 'compare', 'capture']);
/** What made an old invocation a run, named in the notice in this order. */
const RUN_MODE_FLAGS = ['url', 'trace', 'workload', 'clock'];
const CHAT_FLAGS = new Set(CHAT_KEYS);
const GSP_FLAGS = new Map(GSP_SPEC_KEYS.map((k) => [`gsp-${k}`, k]));
const BOOLEAN_KEYS = new Set(['ordered']);

/** `--sessions 64 --gsp-num-groups 4` → `--chat sessions=64 --gsp num-groups=4`, at the end. */
function foldKnobs(words: readonly string[]): { words: string[]; renames: string[] } {
  const out: string[] = [];
  const chat: string[] = [];
  const gsp: string[] = [];
  const old: { chat: string[]; gsp: string[] } = { chat: [], gsp: [] };
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    const m = /^--(no-)?([a-z][a-z0-9-]*)(?:=(.*))?$/s.exec(word);
    const name = m?.[2];
    const spec = name === undefined ? undefined : CHAT_FLAGS.has(name) ? 'chat' : GSP_FLAGS.has(name) ? 'gsp' : undefined;
    if (m === null || name === undefined || spec === undefined || (m[1] !== undefined && spec === 'chat')) {
      out.push(word);
      continue;
    }
    const key = spec === 'chat' ? name : GSP_FLAGS.get(name)!;
    let value: string;
    if (BOOLEAN_KEYS.has(key)) {
      const next = words[i + 1];
      if (m[1] !== undefined) value = 'false';
      else if (m[3] !== undefined) value = m[3];
      else if (next === 'true' || next === 'false') {
        value = next;
        i++;
      } else value = 'true';
    } else if (m[3] !== undefined) value = m[3];
    else if (i + 1 < words.length) value = words[++i]!;
    else {
      out.push(word);
      continue;
    }
    (spec === 'chat' ? chat : gsp).push(`${key}=${value}`);
    old[spec].push(BOOLEAN_KEYS.has(key) ? word : `${word.split('=')[0]} ${value}`);
  }
  const renames: string[] = [];
  if (chat.length > 0) {
    out.push('--chat', chat.join(','));
    renames.push(`'${old.chat.join(' ')}' is now '--chat ${chat.join(',')}'`);
  }
  if (gsp.length > 0) {
    out.push('--gsp', gsp.join(','));
    renames.push(`'${old.gsp.join(' ')}' is now '--gsp ${gsp.join(',')}'`);
  }
  return { words: out, renames };
}
