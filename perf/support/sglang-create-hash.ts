import { createHash } from 'node:crypto';

/**
 * SGLang's page chain as routerctl computed it before src/prefix/sha256-pages.ts: a
 * node:crypto hash object per page, the parent's digest Buffer and the page's tokens
 * fed to it, a fresh digest Buffer out. Kept for the benches' "before" column. Pushes
 * each full page's key in tokens[from, to) (folded as foldHash does) onto `keys`, and
 * returns the last digest.
 */
export function createHashChain(
  tokens: ArrayLike<number>,
  from: number,
  to: number,
  pageSize: number,
  parent: Buffer | undefined,
  keys: number[],
): Buffer | undefined {
  const bytes = Buffer.allocUnsafe(pageSize * 4);
  for (let start = from; start + pageSize <= to; start += pageSize) {
    for (let i = start; i < start + pageSize; i++) bytes.writeUInt32LE(tokens[i]! >>> 0, (i - start) * 4);
    const h = createHash('sha256');
    if (parent) h.update(parent);
    h.update(bytes);
    parent = h.digest();
    const hi = parent.readUInt32BE(0);
    const lo = parent.readUInt32BE(4);
    keys.push((hi & 0xfffff) * 0x1_0000_0000 + ((lo ^ (hi >>> 20)) >>> 0));
  }
  return parent;
}

/**
 * engineBlockKeys's SGLang path as it was before sha256-pages.ts: createHashChain with
 * the same checkpoints (every ~1,024 tokens, keyed by a cheap chained hash of the
 * tokens so far, `marksOf`), for the "before" column of a prompt whose beginning was seen.
 */
export class CreateHashCheckpoints {
  readonly #checkpoints = new Map<number, { parent: Buffer; keys: number[]; pages: number }>();
  constructor(private readonly marksOf: (tokens: ArrayLike<number>, span: number) => number[]) {}

  keys(tokens: ArrayLike<number>, pageSize: number): number[] {
    const pages = Math.floor(tokens.length / pageSize);
    const span = pageSize * Math.max(1, Math.round(1024 / pageSize));
    const pagesPerSpan = span / pageSize;
    const marks = this.marksOf(tokens, span).map((h) => h + pageSize);
    let from = marks.length - 1;
    let resume: { parent: Buffer; keys: number[]; pages: number } | undefined;
    for (; from >= 0; from--) {
      const c = this.#checkpoints.get(marks[from]!);
      if (c !== undefined && c.pages === (from + 1) * pagesPerSpan) {
        resume = c;
        break;
      }
    }
    const keys = resume ? resume.keys.slice(0, resume.pages) : [];
    let parent = resume?.parent;
    for (let next = from + 1; next < marks.length; next++) {
      const end = (next + 1) * pagesPerSpan;
      parent = createHashChain(tokens, keys.length * pageSize, end * pageSize, pageSize, parent, keys);
      if (!this.#checkpoints.has(marks[next]!)) this.#checkpoints.set(marks[next]!, { parent: parent!, keys, pages: end });
    }
    createHashChain(tokens, keys.length * pageSize, pages * pageSize, pageSize, parent, keys);
    return keys;
  }
}
