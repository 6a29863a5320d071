import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

export interface ComposeService {
  image?: string;
  build?: string;
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
  restart?: string;
  read_only?: boolean;
  container_name?: string;
}

export interface Compose {
  services: Record<string, ComposeService>;
}

/**
 * Compose's own variable interpolation, for the forms docker-compose.yml uses: `${VAR:-default}`
 * takes the default, `${VAR:?message}` (required, no default) a placeholder (long enough for the
 * rules on what an operator gives, e.g. ADMIN_TOKEN's 32 characters), `$$` a literal `$`.
 */
export function interpolate(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(/\$\$|\$\{(\w+)(?::?([-?])([^}]*))?\}/g, (match, name: string, op?: string, arg?: string) => (match === '$$' ? '$' : op === '-' ? (arg ?? '') : `required-${name}-given-by-the-operator`));
  if (Array.isArray(value)) return value.map(interpolate);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v)]));
  return value;
}

/** docker-compose.yml as Compose sees it: `<<` merge keys merged (YAML 1.1), variables interpolated with their defaults. */
export function loadCompose(root: string): Compose {
  return interpolate(parse(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true })) as Compose;
}
