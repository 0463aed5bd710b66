import { describe, expect, it } from 'vitest';
import { usageLine } from '../../src/cli/index.js';

describe('usageLine: yargs validation as one line', () => {
  it.each([
    [
      'Invalid values:\n  Argument: sort, Given: "wating", Choices: "waiting", "rejections", "url"',
      "invalid value 'wating' for --sort: expected one of waiting, rejections, url (did you mean waiting?)",
    ],
    [
      'Invalid values:\n  Argument: flavor, Given: "tgi", Choices: "sglang", "vllm"',
      "invalid value 'tgi' for --flavor: expected one of sglang, vllm",
    ],
    [
      'Invalid values:\n  Argument: flavor, Given: "vlm", Choices: "sglang", "vllm"\n  Argument: kv-events-format, Given: "mapp", Choices: "array", "map"',
      "invalid value 'vlm' for --flavor: expected one of sglang, vllm (did you mean vllm?); invalid value 'mapp' for --kv-events-format: expected one of array, map (did you mean map?)",
    ],
    ['Unknown arguments: bogus, x', 'Unknown arguments: bogus, x'],
    ['Not enough arguments\n  following: url', 'Not enough arguments following: url'],
  ])('%j', (message, want) => {
    expect(usageLine(message)).toBe(want);
  });
});
