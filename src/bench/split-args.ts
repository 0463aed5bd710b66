/**
 * Split one configuration string ("--policy cache_aware --worker-queue-limit 6") into
 * argv words the way a POSIX shell would for plain words, quotes and backslashes,
 * so a value with spaces can be quoted inside the quoted configuration. Throws on an
 * unterminated quote; nothing is expanded or executed.
 */
export function splitArgs(text: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quote === "'") {
      if (ch === "'") quote = undefined;
      else word += ch;
      continue;
    }
    if (quote === '"') {
      if (ch === '"') quote = undefined;
      else if (ch === '\\' && i + 1 < text.length && '"\\$`'.includes(text[i + 1]!)) word += text[++i]!;
      else word += ch;
      continue;
    }
    if (ch === "'" || ch === '"') {
      quote = ch;
      inWord = true;
    } else if (ch === '\\' && i + 1 < text.length) {
      word += text[++i]!;
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += ch;
      inWord = true;
    }
  }
  if (quote) throw new Error(`unterminated ${quote} quote in "${text}"`);
  if (inWord) words.push(word);
  return words;
}
