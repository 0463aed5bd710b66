import { ApiErrors } from '../api-error/api-error.js';

/**
 * Generation bodies must be sent as `application/json` (parameters such as charset
 * allowed, any case); anything else, and no Content-Type at all, is a 415 before a
 * byte of the body is read (docs/http-edge.md, "Content type").
 *
 * The point is cross-site safety: a web page can POST without a CORS preflight only
 * with text/plain, a form encoding, or no content type (a Blob or ArrayBuffer body),
 * so refusing exactly those means no page a user visits can make this router start a
 * generation. It also turns curl's default (-d sends a form encoding) into a clear
 * error instead of a confusing one.
 */
export function requireJsonContentType(header: string | undefined): void {
  if (header === undefined || !isJson(header)) throw ApiErrors.unsupportedMediaType();
}

function isJson(header: string): boolean {
  const semi = header.indexOf(';');
  const type = (semi === -1 ? header : header.slice(0, semi)).trim();
  return type.length === 16 && type.toLowerCase() === 'application/json';
}
