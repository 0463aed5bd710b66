import { describe, expect, it } from 'vitest';
import { CircuitBreaker } from '../../src/router/upstream/circuit-breaker.js';
import type { BreakerState } from '../../src/router/upstream/circuit-breaker.js';

/** A breaker that records its transitions. */
function breaker(threshold: number | null, coolDownMs = 1000): { b: CircuitBreaker; seen: BreakerState[] } {
  const b = new CircuitBreaker(threshold, coolDownMs);
  const seen: BreakerState[] = [];
  b.onChange = (s) => seen.push(s);
  return { b, seen };
}

describe('CircuitBreaker', () => {
  it('opens after `threshold` consecutive failures; a success in between resets the streak', () => {
    const { b } = breaker(3);
    b.failure(0);
    b.failure(1);
    b.success();
    b.failure(2);
    b.failure(3);
    expect(b.state).toBe('closed');
    expect(b.failureStreak).toBe(2);
    b.failure(4);
    expect(b.state).toBe('open');
  });

  it('backpressure neither opens it nor resets the streak, but closes a half-open breaker', () => {
    const { b } = breaker(2, 100);
    b.failure(0);
    b.backpressure();
    expect(b.failureStreak).toBe(1);
    b.failure(1);
    expect(b.state).toBe('open');
    expect(b.acquire(200)).toBe(true);
    expect(b.state).toBe('half_open');
    b.backpressure(b.generation);
    expect(b.state).toBe('closed');
  });

  it('one half-open probe after the cool-down: its success closes, its failure reopens with a fresh cool-down', () => {
    const { b, seen } = breaker(1, 100);
    b.failure(0);
    expect(b.acquire(50)).toBe(false);
    expect(b.wouldAllow(100)).toBe(true);
    expect(b.acquire(100)).toBe(true);
    expect(b.acquire(100)).toBe(false); // one probe at a time
    b.failure(150, b.generation);
    expect(b.state).toBe('open');
    expect(b.acquire(200)).toBe(false); // cool-down runs from the reopening
    expect(b.acquire(250)).toBe(true);
    b.success(b.generation);
    expect(seen).toEqual(['open', 'half_open', 'open', 'half_open', 'closed']);
  });

  it('failures while open are ignored, and so is a success: only the probe may close it', () => {
    const { b } = breaker(1, 100);
    b.failure(0);
    b.failure(50);
    b.success();
    expect(b.state).toBe('open');
    expect(b.acquire(99)).toBe(false);
    expect(b.acquire(100)).toBe(true);
  });

  it('a verdict from a request admitted before the latest opening is stale and ignored', () => {
    const { b } = breaker(2, 100);
    expect(b.acquire(0)).toBe(true);
    const longStream = b.generation; // admitted while closed
    b.failure(1);
    b.failure(2); // opens: a new generation
    expect(b.acquire(150)).toBe(true); // the probe
    const probe = b.generation;
    b.success(longStream); // the long stream completes during the probe
    expect(b.state).toBe('half_open');
    b.release(longStream); // nor does it free the probe slot
    expect(b.acquire(151)).toBe(false);
    b.failure(152, longStream);
    expect(b.state).toBe('half_open');
    b.success(probe);
    expect(b.state).toBe('closed');
  });

  it('a cancelled probe gives its slot back', () => {
    const { b } = breaker(1, 100);
    b.failure(0);
    expect(b.acquire(100)).toBe(true);
    b.release(b.generation);
    expect(b.acquire(101)).toBe(true);
  });

  it.each([null, 0, -1])('threshold %s: disabled, never opens', (threshold) => {
    const { b, seen } = breaker(threshold);
    for (let i = 0; i < 50; i++) b.failure(i);
    expect(b.enabled).toBe(false);
    expect(b.state).toBe('closed');
    expect(seen).toEqual([]);
  });
});
