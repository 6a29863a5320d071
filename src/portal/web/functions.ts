import { guarded, holds } from './access';
import { api, type DeliveryRow, type Destination, type FunctionItem, type FunctionKind, type Source } from './api';
import { announce, badge, h, replace, time } from './dom';
import { functionConsole } from './function-console';
import { destinationsBySource } from './names';
import type { Page } from './page';

interface Version {
  version: number;
  code: string;
  isDeployed: boolean;
  createdAt: string;
}
interface InsertInstance {
  id: string;
  name: string;
  integrationId: string;
  enabled: boolean;
}
interface FailedRequest {
  id: string;
  version: number;
  failedAt: string;
  reason: string;
  error?: { type: string; message: string };
}
/** The list answers carry a function's id on its instances; the portal's shared types predate them. */
type FunctionSource = Source & { functionId?: string };
type FunctionDestination = Omit<Destination, 'type'> & { type?: string; functionId?: string };

const KINDS: Record<FunctionKind, string> = { SOURCE: 'Source function', DESTINATION: 'Destination function', INSERT_DESTINATION: 'Insert function' };
const RECENT = 10;

const fnPath = (id: string) => `/admin/functions/${encodeURIComponent(id)}`;
const headed = (titles: string[]) => h('thead', {}, h('tr', {}, ...titles.map((title) => h('th', { scope: 'col' }, title))));
const deployedOf = (fn: FunctionItem) => `v${fn.deployedVersion}${fn.latestVersion !== fn.deployedVersion ? ` (latest v${fn.latestVersion})` : ''}`;

/** Every function by name, its kind and the version its instances run. */
export async function functionsPage({ main, left }: Page): Promise<void> {
  const { functions } = await api<{ functions: FunctionItem[] }>('GET', '/admin/functions');
  if (left()) return;
  const rows = functions.map((fn) =>
    h('tr', { 'data-function-id': fn.id }, h('td', {}, h('a', { href: `#/functions/${encodeURIComponent(fn.id)}`, title: fn.id }, fn.displayName)), h('td', {}, KINDS[fn.resourceType]), h('td', {}, deployedOf(fn)), h('td', {}, time(fn.updatedAt))),
  );
  replace(
    main,
    h('h1', {}, 'Functions'),
    functions.length === 0
      ? h('p', { class: 'muted' }, 'No functions yet: POST /admin/functions.')
      : h('table', { class: 'functions' }, h('caption', { class: 'muted' }, `${functions.length} function(s)`), headed(['Name', 'Kind', 'Deployed', 'Saved']), h('tbody', {}, ...rows)),
  );
}

/** Where a function runs: each instance as a row, and the failed deliveries or requests to look up. */
interface Instance {
  row: HTMLElement;
  /** The destination whose failed deliveries are this instance's errors (not for a source). */
  destinationId?: string;
  sourceId?: string;
}

async function instancesOf(fn: FunctionItem): Promise<Instance[]> {
  const sources = (await api<{ sources: FunctionSource[] }>('GET', '/admin/sources')).sources;
  const sourceName = new Map(sources.map((s) => [s.id, s.name]));
  const enabled = (on: boolean) => badge(on ? 'on' : 'off');
  if (fn.resourceType === 'SOURCE') {
    return sources
      .filter((s) => s.functionId === fn.id)
      .map((s) => ({ sourceId: s.id, row: h('tr', { 'data-instance': s.id }, h('td', {}, 'Source'), h('td', {}, h('a', { href: `#/destinations?source=${encodeURIComponent(s.id)}`, title: s.id }, s.name)), h('td', {}, enabled(true))) }));
  }
  const bySource = await destinationsBySource(sources);
  const destinations = [...bySource.values()].flat() as FunctionDestination[];
  const link = (d: FunctionDestination) => h('a', { href: `#/destinations/${encodeURIComponent(d.id)}`, title: d.id }, d.name);
  const where = (d: FunctionDestination) => h('small', { class: 'muted' }, ` under ${sourceName.get(d.sourceId) ?? d.sourceId}`);
  if (fn.resourceType === 'DESTINATION') {
    return destinations
      .filter((d) => d.type === 'function' && d.functionId === fn.id)
      .map((d) => ({ destinationId: d.id, row: h('tr', { 'data-instance': d.id }, h('td', {}, 'Destination'), h('td', {}, link(d), where(d)), h('td', {}, enabled(d.enabled))) }));
  }
  const { insertFunctionInstances } = await api<{ insertFunctionInstances: InsertInstance[] }>('GET', `/admin/insert-function-instances?functionId=${encodeURIComponent(fn.id)}`);
  const byId = new Map(destinations.map((d) => [d.id, d]));
  return insertFunctionInstances.map((i) => {
    const d = byId.get(i.integrationId);
    const on = d ? [link(d), where(d)] : [h('code', {}, i.integrationId)];
    return { destinationId: i.integrationId, row: h('tr', { 'data-instance': i.id }, h('td', { title: i.id }, i.name), h('td', {}, 'before ', ...on), h('td', {}, enabled(i.enabled))) };
  });
}

/** A destination instance's failed deliveries (their disposition is in each delivery's detail); a source's failed requests with their reason. */
async function recentErrors(instances: Instance[]): Promise<HTMLElement> {
  const lists = await Promise.all(
    instances.map(async (i): Promise<HTMLElement[]> => {
      if (i.sourceId) {
        const { requests } = await api<{ requests: FailedRequest[] }>('GET', `/admin/sources/${encodeURIComponent(i.sourceId)}/function-requests`);
        return requests.slice(0, RECENT).map((r) =>
          h('tr', { 'data-error': r.id }, h('td', {}, time(r.failedAt)), h('td', {}, `v${r.version}`), h('td', {}, r.reason), h('td', {}, r.error ? `${r.error.type}: ${r.error.message}` : h('span', { class: 'muted' }, holds('payloads:read') ? '' : 'needs payloads:read'))),
        );
      }
      const { deliveries } = await api<{ deliveries: DeliveryRow[] }>('GET', `/admin/deliveries?destinationId=${encodeURIComponent(i.destinationId!)}&status=failed&limit=${RECENT}`);
      return deliveries.map((d) =>
        h(
          'tr',
          { 'data-error': d.messageId },
          h('td', {}, time(d.closedAt ?? d.startedAt)),
          h('td', {}, ''),
          h('td', {}, h('a', { href: `#/deliveries/${encodeURIComponent(d.sourceId)}/${encodeURIComponent(d.messageId)}` }, `${d.type} ${d.messageId} failed`)),
          h('td', { class: 'muted' }, 'its disposition and logs are in the delivery'),
        ),
      );
    }),
  );
  const rows = lists.flat();
  if (rows.length === 0) return h('p', { class: 'muted errors' }, 'No failed deliveries or requests.');
  return h('table', { class: 'errors' }, headed(['Failed', 'Version', 'What', 'Error']), h('tbody', {}, ...rows));
}

function versionsTable(fn: FunctionItem, versions: Version[], reload: () => Promise<void>): HTMLElement {
  const deploy = (version: number) =>
    guarded(
      'POST /admin/functions/:id/deploy',
      h('button', { type: 'button', class: 'secondary', onclick: async () => (await api('POST', `${fnPath(fn.id)}/deploy`, { version }), announce(`Deployed v${version}`), await reload()) }, `Deploy v${version}`),
    );
  return h(
    'table',
    { class: 'versions' },
    headed(['Version', 'Deployed', 'Saved', 'Code']),
    h(
      'tbody',
      {},
      ...versions.map((v) =>
        h(
          'tr',
          { 'data-version': v.version },
          h('td', { class: 'count' }, `v${v.version}`),
          h('td', {}, v.isDeployed ? badge('deployed', 'on') : deploy(v.version)),
          h('td', {}, time(v.createdAt)),
          h('td', {}, h('details', {}, h('summary', {}, `${v.code.split('\n').length} lines`), h('pre', {}, v.code))),
        ),
      ),
    ),
  );
}

/** One function: its versions (deployable), its instances, their recent errors, and a console that runs its latest version. */
export async function functionPage(page: Page, id: string): Promise<void> {
  const { main, left } = page;
  const [fn, { versions }] = await Promise.all([api<FunctionItem>('GET', fnPath(id)), api<{ versions: Version[] }>('GET', `${fnPath(id)}/versions`)]);
  const instances = await instancesOf(fn);
  const errors = await recentErrors(instances);
  if (left()) return;
  replace(
    main,
    h('p', {}, h('a', { href: '#/functions' }, '← Functions')),
    h('h1', {}, fn.displayName, ' ', h('small', { class: 'id' }, fn.id)),
    fn.description && h('p', { class: 'muted' }, fn.description),
    h('p', { class: 'facts' }, `${KINDS[fn.resourceType]} · instances run ${deployedOf(fn)}`),
    h('section', { class: 'card', 'data-part': 'versions' }, h('h2', {}, 'Versions'), versionsTable(fn, versions, () => functionPage(page, id))),
    h(
      'section',
      { class: 'card', 'data-part': 'instances' },
      h('h2', {}, 'Instances'),
      instances.length === 0 ? h('p', { class: 'muted' }, 'Nothing runs this function yet.') : h('table', { class: 'instances' }, headed(['Instance', 'Where', 'Enabled']), h('tbody', {}, ...instances.map((i) => i.row))),
    ),
    h('section', { class: 'card', 'data-part': 'errors' }, h('h2', {}, 'Recent errors'), errors),
    h('section', { class: 'card', 'data-part': 'console' }, h('h2', {}, 'Test the latest version'), functionConsole(fn)),
  );
}
