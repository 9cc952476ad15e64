import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * This user's folder for backlog-search's own files, outside every backlog: the cache-signing key, the
 * entries of running servers, the MCP server's kept `initialize` answer. `$XDG_CONFIG_HOME/backlog-search`,
 * else `~/.config/backlog-search`. Node built-ins only: a start reads it before anything else loads.
 */
export function userConfigDir(): string {
  return join(process.env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'backlog-search');
}
