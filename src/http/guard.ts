/**
 * DNS-rebinding protection for every route: the Host header must name this machine (or a name added
 * with --allow-host), and a browser's Origin must be a loopback page (or one added with --allow-origin).
 */
import type { MiddlewareHandler } from 'hono';
import { httpError, type HttpEnv } from './respond.js';

export const LOOPBACK = ['localhost', '127.0.0.1', '[::1]'];

/** `example.com:3030` -> `example.com`; `[::1]:3030` -> `[::1]`. */
function hostnameOf(host: string): string {
  const h = host.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1);
  const colon = h.indexOf(':');
  return colon >= 0 ? h.slice(0, colon) : h;
}

/**
 * DNS-rebinding protection: a page on evil.example whose name resolves to 127.0.0.1 still sends
 * `Host: evil.example` and `Origin: http://evil.example`; both are refused with 403.
 */
export function hostOriginGuard(
  options: { allowedHosts?: string[]; allowedOrigins?: string[] } = {},
): MiddlewareHandler<HttpEnv> {
  const hosts = new Set([...LOOPBACK, ...(options.allowedHosts ?? []).map(hostnameOf)]);
  const anyHost = hosts.has('*');
  const origins = new Set(
    (options.allowedOrigins ?? []).map((o) => o.trim().toLowerCase().replace(/\/+$/, '')),
  );
  const anyOrigin = origins.has('*');
  return async (c, next) => {
    const host = c.req.header('host');
    if (!anyHost && (!host || !hosts.has(hostnameOf(host)))) {
      return httpError(
        c,
        403,
        'FORBIDDEN',
        `Host "${host ?? ''}" is not allowed`,
        `This server answers to ${[...hosts].join(', ')}; start it with --allow-host <name> to add one.`,
      );
    }
    const origin = c.req.header('origin');
    if (origin !== undefined && !anyOrigin) {
      let ok = origins.has(origin.toLowerCase());
      if (!ok) {
        try {
          const url = new URL(origin);
          ok = (url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK.includes(url.hostname);
        } catch {
          ok = false;
        }
      }
      if (!ok)
        return httpError(
          c,
          403,
          'FORBIDDEN',
          `Origin "${origin}" is not allowed`,
          'Only pages served from localhost may call this server; start it with --allow-origin <origin> to add one.',
        );
    }
    await next();
  };
}
