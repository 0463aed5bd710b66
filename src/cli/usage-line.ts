import { didYouMean } from './did-you-mean.js';

/**
 * yargs' own validation messages as one line each, the way routerctl states a usage
 * error: "Invalid values:\n  Argument: sort, Given: "wating", Choices: "waiting", …"
 * becomes "invalid value 'wating' for --sort: expected one of waiting, rejections,
 * url (did you mean waiting?)". Anything else is only joined onto one line.
 */
export function usageLine(message: string): string {
  const invalid = [...message.matchAll(/Argument: ([\w-]+), Given: "([^"]*)", Choices: ((?:"[^"]*"(?:, )?)+)/g)];
  if (invalid.length > 0) {
    return invalid
      .map(([, flag, given, list]) => {
        const choices = [...list!.matchAll(/"([^"]*)"/g)].map((m) => m[1]!);
        const guess = didYouMean(given!, choices);
        return `invalid value '${given}' for --${flag}: expected one of ${choices.join(', ')}${guess ? ` (did you mean ${guess}?)` : ''}`;
      })
      .join('; ');
  }
  return message
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .join(' ');
}
