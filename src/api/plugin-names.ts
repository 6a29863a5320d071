/** Where fastify reads a plugin's name (fastify-plugin sets it for the plugins of packages). */
const DISPLAY_NAME = Symbol.for('fastify.display-name');

/**
 * Gives each of our route plugins its name up front, keyed as written: fastify names a plugin
 * without one by scanning every loaded module (`require.cache`) for it, twice per registration.
 * That is thousands of modules per plugin, a CPU-second per app built under Jest (whose module
 * registry stands behind that cache), and a few milliseconds per start in production.
 */
export function namePlugins(plugins: Record<string, object>): void {
  for (const [name, plugin] of Object.entries(plugins)) {
    if (!Object.prototype.hasOwnProperty.call(plugin, DISPLAY_NAME)) Object.defineProperty(plugin, DISPLAY_NAME, { value: name });
  }
}
