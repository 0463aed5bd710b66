/**
 * `--token`, for every command that reads a router's admin API (top, explain, doctor,
 * bench --capture): the router's `--admin-token`, better given in the environment so
 * that it stays out of shell history and `ps`.
 */
export const ADMIN_TOKEN_OPTION = {
  type: 'string',
  describe: "admin API bearer token (the router's --admin-token); prefer ROUTERCTL_ADMIN_TOKEN",
  defaultDescription: '$ROUTERCTL_ADMIN_TOKEN',
} as const;

/** The token to send: the flag's, else ROUTERCTL_ADMIN_TOKEN's, else none. */
export function adminToken(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return flag ?? (env.ROUTERCTL_ADMIN_TOKEN || undefined);
}
