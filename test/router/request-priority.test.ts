import { describe, expect, it } from 'vitest';
import { PRIORITY_HEADER, requestPriority } from '../../src/router/server/generation.js';

/** The priority a request carries (docs/routing.md §Shedding): below 0 it may be shed; anything unreadable is 0, never shed. */
describe(`requestPriority (${PRIORITY_HEADER})`, () => {
  it.each([
    [undefined, 0],
    ['', 0],
    ['0', 0],
    ['-1', -1],
    [' -3 ', -3],
    ['+2', 2],
    ['7', 7],
    ['-1.5', 0],
    ['low', 0],
    ['-', 0],
    ['-9999999999', 0],
    [['-1', '5'], -1],
  ] as Array<[string | string[] | undefined, number]>)('%j → %d', (value, expected) => {
    expect(requestPriority(value)).toBe(expected);
  });
});
