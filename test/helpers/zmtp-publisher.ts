/**
 * What a ZMTP publisher written by hand sends first (RFC 23): its greeting, as version
 * 3.`minor` with the NULL mechanism, then its READY command naming it a PUB. Tests that
 * speak to the router's own ZMTP reader write this, then frames of their choosing.
 */
export function publisherHandshake(minor: 0 | 1): Buffer {
  const greeting = Buffer.alloc(64);
  greeting[0] = 0xff;
  greeting[9] = 0x7f;
  greeting[10] = 3;
  greeting[11] = minor;
  greeting.write('NULL', 12, 'latin1');
  const ready = Buffer.concat([
    Buffer.from([0x04, 1 + 5 + 1 + 11 + 4 + 3, 5]),
    Buffer.from('READY'),
    Buffer.from([11]),
    Buffer.from('Socket-Type'),
    Buffer.from([0, 0, 0, 3]),
    Buffer.from('PUB'),
  ]);
  return Buffer.concat([greeting, ready]);
}
