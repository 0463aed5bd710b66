import { afterEach } from 'vitest';

/**
 * What a test opens (fleets, routers), closed after each test, the last opened first:
 * routers before the engines they subscribe to. Call at a test file's top level; the
 * returned function registers a thing and hands it back.
 */
export function closingAfterEach(): <T extends { close(): Promise<unknown> }>(opened: T) => T {
  const open: Array<{ close(): Promise<unknown> }> = [];
  afterEach(async () => {
    for (const x of open.splice(0).reverse()) await x.close();
  });
  return (opened) => {
    open.push(opened);
    return opened;
  };
}
