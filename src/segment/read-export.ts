/**
 * HashiCorp's HCL parser (Go, as WebAssembly). Its own type declarations pull in the DOM library
 * (`/// <reference lib="dom" />`), which would change Node's `fetch` and `Headers` types for the
 * whole project, so its one function is declared here instead.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { parse } = require('@cdktf/hcl2json') as { parse: (filename: string, contents: string) => Promise<unknown> };

/**
 * A Segment workspace export read into resources: Terraform provider files (`.tf`, as Git Sync or
 * `terraform import` writes them: one resource per file, each with an `import {}` block naming its
 * Segment id) parsed with HashiCorp's own HCL parser (@cdktf/hcl2json), or Segment Public API JSON
 * answers (`{data: {source: …}}`, `{data: {destinations: […]}}`, …). Nothing here writes.
 */
export interface SegmentResource {
  /** Terraform's resource type (`segment_source`, …); Public API objects are given the same names. */
  type: string;
  /** The Segment id (a Terraform import id, compound ones such as `<destination>:<subscription>` as written). */
  segmentId: string;
  /** The file it came from, for the report. */
  file: string;
  attributes: Record<string, unknown>;
}

export interface ReadExport {
  resources: SegmentResource[];
  /** Files or blocks that could not be read, each with why (the report lists them). */
  problems: Array<{ file: string; problem: string }>;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A value Terraform would compute (`${var.x}`, `${segment_source.a.id}`): an export holds values only. */
export class TerraformExpression extends Error {}

const JSONENCODE = /^\$\{jsonencode\(([\s\S]*)\)\}$/;

/**
 * A parsed value as the export meant it: `jsonencode({...})` evaluated (parsed again as HCL, which
 * reads its object syntax), template escapes (`$${`, `%%{`) undone, and any interpolation left a
 * TerraformExpression naming where it is.
 */
async function evaluated(value: unknown, at: string): Promise<unknown> {
  if (typeof value === 'string') {
    const encoded = JSONENCODE.exec(value);
    if (encoded) {
      const parsed = (await parse('jsonencode.tf', `v = ${encoded[1]}`)) as { v?: unknown };
      return evaluated(parsed.v, at);
    }
    if (/(^|[^$])\$\{/.test(value) || /(^|[^%])%\{/.test(value)) throw new TerraformExpression(`${at}: is a Terraform expression (\${…} or %{…}), not a value; an export holds values only`);
    return value.replace(/\$\$\{/g, '${').replace(/%%\{/g, '%{');
  }
  if (Array.isArray(value)) return Promise.all(value.map((item, i) => evaluated(item, `${at}[${i}]`)));
  if (isObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = await evaluated(item, `${at}.${key}`);
    return out;
  }
  return value;
}

/** `${segment_source.id-abc}` → `segment_source.id-abc`. */
const importTarget = (to: unknown) => (typeof to === 'string' ? to.replace(/^\$\{/, '').replace(/\}$/, '') : undefined);

/** Git Sync names a resource `id-<import id>` with `:` written `_`: the id when no import block says it. */
const idFromName = (name: string) => (name.startsWith('id-') ? name.slice(3) : name);

async function readTerraform(file: string, text: string): Promise<ReadExport> {
  const resources: SegmentResource[] = [];
  const problems: ReadExport['problems'] = [];
  let parsed: { resource?: Record<string, Record<string, unknown[]>>; import?: Array<{ id?: unknown; to?: unknown }> };
  try {
    parsed = (await parse(file, text)) as typeof parsed;
  } catch (err) {
    return { resources, problems: [{ file, problem: `is not HCL Terraform can read: ${(err as Error).message}` }] };
  }
  const ids = new Map<string, string>();
  for (const block of parsed.import ?? []) {
    const target = importTarget(block.to);
    if (target && typeof block.id === 'string') ids.set(target, block.id);
  }
  for (const [type, byName] of Object.entries(parsed.resource ?? {})) {
    for (const [name, blocks] of Object.entries(byName)) {
      const block = Array.isArray(blocks) ? blocks[0] : blocks;
      if (!isObject(block)) continue;
      try {
        const attributes = (await evaluated(block, `${type}.${name}`)) as Record<string, unknown>;
        resources.push({ type, segmentId: ids.get(`${type}.${name}`) ?? idFromName(name), file, attributes });
      } catch (err) {
        if (!(err instanceof TerraformExpression)) throw err;
        problems.push({ file, problem: err.message });
      }
    }
  }
  return { resources, problems };
}

/** Public API answer keys and the resource type each holds. */
const API_KEYS: Record<string, string> = {
  source: 'segment_source',
  sources: 'segment_source',
  destination: 'segment_destination',
  destinations: 'segment_destination',
  subscription: 'segment_destination_subscription',
  subscriptions: 'segment_destination_subscription',
  filter: 'segment_destination_filter',
  filters: 'segment_destination_filter',
  trackingPlan: 'segment_tracking_plan',
  trackingPlans: 'segment_tracking_plan',
  transformation: 'segment_transformation',
  transformations: 'segment_transformation',
  function: 'segment_function',
  functions: 'segment_function',
  label: 'segment_label',
  labels: 'segment_label',
  user: 'segment_user',
  users: 'segment_user',
  warehouse: 'segment_warehouse',
  warehouses: 'segment_warehouse',
};

/** Public API JSON: one answer (`{data: {...}}`) or a list of them; every object with an id under a known key. */
function readPublicApi(file: string, text: string): ReadExport {
  let json: unknown;
  try {
    json = JSON.parse(text) as unknown;
  } catch (err) {
    return { resources: [], problems: [{ file, problem: `is not JSON: ${(err as Error).message}` }] };
  }
  const resources: SegmentResource[] = [];
  const answers: unknown[] = Array.isArray(json) ? (json as unknown[]) : [json];
  for (const answer of answers) {
    const data: unknown = isObject(answer) && isObject(answer.data) ? answer.data : answer;
    if (!isObject(data)) continue;
    for (const [key, value] of Object.entries(data)) {
      const type = API_KEYS[key];
      if (!type) continue;
      for (const item of Array.isArray(value) ? value : [value]) {
        if (!isObject(item)) continue;
        const id = typeof item.id === 'string' ? item.id : typeof item.key === 'string' ? `${item.key}:${typeof item.value === 'string' ? item.value : ''}` : undefined;
        if (id) resources.push({ type, segmentId: id, file, attributes: item });
      }
    }
  }
  if (resources.length === 0)
    return { resources, problems: [{ file, problem: 'holds no Segment Public API object this import knows (source, destination, subscription, filter, trackingPlan, transformation, function, label, user, warehouse)' }] };
  return { resources, problems: [] };
}

/** Every file of an export: `.tf` as Terraform, `.json` as Public API answers; other files are left out, and said so. */
export async function readExport(files: Record<string, string>): Promise<ReadExport> {
  const all: ReadExport = { resources: [], problems: [] };
  for (const file of Object.keys(files).sort()) {
    const text = files[file];
    const read = file.endsWith('.tf')
      ? await readTerraform(file, text)
      : file.endsWith('.json')
        ? readPublicApi(file, text)
        : { resources: [], problems: [{ file, problem: 'is neither a Terraform (.tf) nor a Public API (.json) file: left out' }] };
    all.resources.push(...read.resources);
    all.problems.push(...read.problems);
  }
  return all;
}
