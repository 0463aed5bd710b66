import { describe, expect, it } from 'vitest';
import { locateJsonError } from '../../src/config/json-error-position.js';

describe('locateJsonError', () => {
  it.each([
    ['{"a": 1, "b": [true, null, -1.5e3, "x\\n"]}', null],
    ['\ufeff{"a": 1}', null],
    ['{"a": 1,}', { line: 1, column: 9, reason: "unexpected '}', expected a property name (no trailing comma in JSON)" }],
    ['[1, 2,]', { line: 1, column: 7, reason: "unexpected ']', expected a value (no trailing comma in JSON)" }],
    ["{'a': 1}", { line: 1, column: 2, reason: "unexpected ''', expected a property name in double quotes" }],
    ['{\n  "a": 1\n  "b": 2\n}', { line: 3, column: 3, reason: "unexpected '\"', expected ',' or '}'" }],
    ['{"a": tru}', { line: 1, column: 7, reason: "unexpected 't', expected a value" }],
    ['{"a": "line\nbreak"}', { line: 1, column: 12, reason: 'control character in string (a line break inside quotes?)' }],
    ['{"a": "\\x"}', { line: 1, column: 8, reason: 'invalid escape in string' }],
    ['{"a": 01}', { line: 1, column: 8, reason: "unexpected '1', expected ',' or '}'" }],
    ['{"a": 1} x', { line: 1, column: 10, reason: "unexpected 'x' after the end of the JSON value" }],
    ['', { line: 1, column: 1, reason: 'unexpected end of input, expected a value' }],
    ['{"a": "open', { line: 1, column: 12, reason: 'unterminated string' }],
  ])('%j', (text, expected) => {
    expect(locateJsonError(text)).toEqual(expected);
    // It only locates: whatever it accepts, JSON.parse accepts too.
    if (expected === null) expect(() => JSON.parse(text.replace(/^\ufeff/, ''))).not.toThrow();
    else expect(() => JSON.parse(text)).toThrow();
  });
});
