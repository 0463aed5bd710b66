import { randomBytes } from 'node:crypto';

/** A client's own id is kept when it is this short and printable. */
const CLIENT_ID = /^[\x21-\x7e]{1,64}$/;

/**
 * Request ids for the decision record and the `x-request-id` response header
 * (docs/decisions.md §Request ids): the client's `x-request-id` when it sent a usable
 * one, else a process prefix and a counter (`r7f3a9c-1f4`), unique per router
 * process and cheap: no random bytes per request.
 */
export class RequestIds {
  readonly #prefix = `r${randomBytes(3).toString('hex')}-`;
  #n = 0;

  next(clientId: string | string[] | undefined): string {
    if (typeof clientId === 'string' && CLIENT_ID.test(clientId)) return clientId;
    return this.#prefix + (++this.#n).toString(36);
  }
}
