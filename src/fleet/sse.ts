export interface SseEvent {
  event: string;
  data: string;
}

/**
 * Incremental server-sent-events parser (the WHATWG event-stream rules that matter
 * here): lines end in LF, CRLF or CR; `event:` and `data:` fields, one optional space
 * after the colon; several `data:` lines join with LF; a blank line dispatches; comment
 * lines (`:`) and unknown fields are ignored; an event without data is dropped. Chunks
 * may split anywhere, including between CR and LF.
 */
export class SseParser {
  /** The unfinished line's pieces, which hold no line break: a multi-megabyte data line arrives in many chunks, and each is scanned once. */
  private partial: string[] = [];
  private event = '';
  private data: string[] = [];
  private pendingCr = false;

  /** Feed decoded text; returns the events completed by it. */
  push(chunk: string): SseEvent[] {
    const out: SseEvent[] = [];
    let text = chunk;
    if (this.pendingCr && text.startsWith('\n')) text = text.slice(1);
    this.pendingCr = false;
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      const piece = text.slice(start, i);
      if (this.partial.length > 0) {
        this.partial.push(piece);
        this.line(this.partial.join(''), out);
        this.partial = [];
      } else {
        this.line(piece, out);
      }
      if (c === 13) {
        if (i + 1 < text.length) {
          if (text.charCodeAt(i + 1) === 10) i++;
        } else {
          this.pendingCr = true;
        }
      }
      start = i + 1;
    }
    if (start < text.length) this.partial.push(text.slice(start));
    return out;
  }

  private line(line: string, out: SseEvent[]): void {
    if (line === '') {
      if (this.data.length > 0) out.push({ event: this.event || 'message', data: this.data.join('\n') });
      this.event = '';
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
  }
}
