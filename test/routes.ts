/** A layer of an Express (router 2) stack, as far as the route walks below read it. */
export interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
  rawPath?: string;
}

/**
 * `METHOD /path` of every route in an Express (router 2) stack, nested routers included, each path put through
 * `normal` (the contract tests write parameters as `{}`).
 */
export function mountedRoutes(stack: Layer[], prefix: string, normal: (path: string) => string, out = new Set<string>()): Set<string> {
  const at = (path: string | undefined) => (path === undefined || path === '/' ? prefix : `${prefix}${path}`);
  for (const layer of stack) {
    if (layer.route) {
      for (const m of Object.keys(layer.route.methods)) if (m !== '_all') out.add(`${m.toUpperCase()} ${normal(at(layer.route.path))}`);
    } else if (layer.handle?.stack) {
      mountedRoutes(layer.handle.stack, at(layer.rawPath), normal, out);
    }
  }
  return out;
}
