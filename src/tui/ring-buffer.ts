/** A fixed-capacity FIFO of the newest values: pushing past capacity drops the oldest. */
export class RingBuffer<T> {
  private readonly items: (T | undefined)[];
  private start = 0;
  private count = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('capacity must be a positive integer');
    this.items = new Array<T | undefined>(capacity);
  }

  get length(): number {
    return this.count;
  }

  push(value: T): void {
    if (this.count < this.capacity) {
      this.items[(this.start + this.count) % this.capacity] = value;
      this.count++;
    } else {
      this.items[this.start] = value;
      this.start = (this.start + 1) % this.capacity;
    }
  }

  /** Oldest first; at most the newest `n` when given. */
  toArray(n: number = this.count): T[] {
    const k = Math.max(0, Math.min(n, this.count));
    const out: T[] = [];
    for (let i = this.count - k; i < this.count; i++) out.push(this.items[(this.start + i) % this.capacity] as T);
    return out;
  }

  last(): T | undefined {
    return this.count === 0 ? undefined : this.items[(this.start + this.count - 1) % this.capacity];
  }
}
