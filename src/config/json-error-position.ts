/**
 * Find where a JSON text stops being JSON. Node 20's JSON.parse often reports no
 * position at all ("Unexpected token 'c', ..."cache_awar"... is not valid JSON"), and
 * an operator with a broken `.routerrc.json` needs a line and column, so this walks
 * the text with a small recursive-descent scanner and reports the first offending
 * character. It only locates; JSON.parse remains the parser.
 */
export interface JsonErrorPosition {
  /** 1-based */
  line: number;
  /** 1-based */
  column: number;
  reason: string;
}

class Stop {
  constructor(
    readonly offset: number,
    readonly reason: string,
  ) {}
}

export function locateJsonError(text: string): JsonErrorPosition | null {
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const n = text.length;

  const ws = (): void => {
    while (i < n && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const unexpected = (what = 'a value'): Stop =>
    i >= n ? new Stop(n, `unexpected end of input, expected ${what}`) : new Stop(i, `unexpected ${show(text[i]!)}, expected ${what}`);

  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') return object();
    if (c === '[') return array();
    if (c === '"') return string();
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return number();
    for (const word of ['true', 'false', 'null']) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return;
      }
    }
    throw unexpected();
  };

  const object = (): void => {
    i++;
    ws();
    if (text[i] === '}') {
      i++;
      return;
    }
    for (;;) {
      ws();
      if (text[i] !== '"')
        throw unexpected(text[i] === '}' ? 'a property name (no trailing comma in JSON)' : 'a property name in double quotes');
      string();
      ws();
      if (text[i] !== ':') throw unexpected("':'");
      i++;
      value();
      ws();
      if (text[i] === ',') {
        i++;
        continue;
      }
      if (text[i] === '}') {
        i++;
        return;
      }
      throw unexpected("',' or '}'");
    }
  };

  const array = (): void => {
    i++;
    ws();
    if (text[i] === ']') {
      i++;
      return;
    }
    for (;;) {
      ws();
      if (text[i] === ']') throw unexpected('a value (no trailing comma in JSON)');
      value();
      ws();
      if (text[i] === ',') {
        i++;
        continue;
      }
      if (text[i] === ']') {
        i++;
        return;
      }
      throw unexpected("',' or ']'");
    }
  };

  const string = (): void => {
    i++;
    while (i < n) {
      const c = text[i]!;
      if (c === '"') {
        i++;
        return;
      }
      if (c === '\\') {
        const e = text[i + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) throw new Stop(i, 'invalid \\u escape');
          i += 6;
          continue;
        }
        if (e === undefined || !'"\\/bfnrt'.includes(e)) throw new Stop(i, 'invalid escape in string');
        i += 2;
        continue;
      }
      if (c.charCodeAt(0) < 0x20) throw new Stop(i, 'control character in string (a line break inside quotes?)');
      i++;
    }
    throw new Stop(n, 'unterminated string');
  };

  const number = (): void => {
    const m = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i, i + 64));
    if (!m) throw unexpected('a number');
    i += m[0].length;
  };

  try {
    value();
    ws();
    if (i < n) throw new Stop(i, `unexpected ${show(text[i]!)} after the end of the JSON value`);
    return null;
  } catch (e) {
    if (!(e instanceof Stop)) throw e;
    return { ...lineColumn(text, e.offset), reason: e.reason };
  }
}

function show(c: string): string {
  if (c === '\n' || c === '\r') return 'line break';
  return `'${c}'`;
}

function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let k = 0; k < offset && k < text.length; k++) {
    if (text[k] === '\n') {
      line++;
      start = k + 1;
    }
  }
  return { line, column: offset - start + 1 };
}
