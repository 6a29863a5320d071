import { api, type Source } from './api';
import { h, replace, time } from './dom';
import { named } from './names';
import type { Page } from './page';

interface TrackingPlan {
  id: string;
  name: string;
  description?: string;
  type: string;
}
interface Rule {
  type: string;
  key?: string;
  version: number;
  jsonSchema: { properties?: { properties?: { required?: string[]; properties?: Record<string, unknown> }; traits?: { required?: string[]; properties?: Record<string, unknown> } } };
}
interface Violation {
  eventType: string;
  eventName: string;
  field: string;
  violationType: string;
  description: string;
  count: number;
  lastSeenAt: string;
}

/** The names a rule plans and those it requires, as the page lists them (the schema itself is the API's). */
function plannedOf(rule: Rule): string {
  const section = rule.jsonSchema.properties?.properties ?? rule.jsonSchema.properties?.traits;
  const names = Object.keys(section?.properties ?? {});
  const required = new Set(section?.required ?? []);
  return names.map((name) => (required.has(name) ? `${name}*` : name)).join(', ') || '–';
}

function rulesTable(rules: Rule[]): HTMLElement {
  if (rules.length === 0) return h('p', { class: 'muted' }, 'No rules yet: PUT /admin/tracking-plans/:id/rules.');
  return h(
    'table',
    { class: 'rules' },
    h('caption', {}, 'Rules (* required)'),
    h('thead', {}, h('tr', {}, ...['Type', 'Event', 'Version', 'Planned names'].map((title) => h('th', { scope: 'col' }, title)))),
    h('tbody', {}, ...rules.map((rule) => h('tr', { 'data-rule': `${rule.type}:${rule.key ?? ''}:${rule.version}` }, h('td', {}, rule.type), h('td', {}, rule.key ?? '–'), h('td', { class: 'count' }, String(rule.version)), h('td', {}, plannedOf(rule))))),
  );
}

/** A source by its name (its destinations' link, the id on hover); the id itself when it has none. */
const sourceNamed = (sources: Map<string, Source>, id: string) => {
  const source = sources.get(id);
  return named(new Map(source ? [[id, { name: source.name, href: `#/destinations?source=${encodeURIComponent(id)}` }]] : []), id);
};

function violationsTable(sources: Map<string, Source>, sourceId: string, violations: Violation[]): HTMLElement {
  if (violations.length === 0) return h('p', { class: 'muted', 'data-violations': sourceId }, 'Source ', sourceNamed(sources, sourceId), ': no violations in the last 24 h.');
  return h(
    'table',
    { class: 'violations', 'data-violations': sourceId },
    h('caption', {}, 'Source ', sourceNamed(sources, sourceId), ': violations in the last 24 h'),
    h('thead', {}, h('tr', {}, ...['Event', 'Field', 'Violation', 'Count', 'Last seen'].map((title) => h('th', { scope: 'col' }, title)))),
    h(
      'tbody',
      {},
      ...violations.map((v) =>
        h('tr', { title: v.description }, h('td', {}, `${v.eventType} ${v.eventName}`.trim()), h('td', {}, h('code', {}, v.field)), h('td', {}, v.violationType), h('td', { class: 'count' }, String(v.count)), h('td', {}, time(v.lastSeenAt))),
      ),
    ),
  );
}

/** Every tracking plan with its rules, and each connected source's violations of the last day. */
export async function trackingPlansPage(page: Page): Promise<void> {
  const [{ trackingPlans }, { sources: sourceList }] = await Promise.all([api<{ trackingPlans: TrackingPlan[] }>('GET', '/admin/tracking-plans'), api<{ sources: Source[] }>('GET', '/admin/sources')]);
  const sources = new Map(sourceList.map((source) => [source.id, source]));
  const sections = await Promise.all(
    trackingPlans.map(async (plan) => {
      const [{ rules }, { sourceIds }] = await Promise.all([
        api<{ rules: Rule[] }>('GET', `/admin/tracking-plans/${encodeURIComponent(plan.id)}/rules?count=1000`),
        api<{ sourceIds: string[] }>('GET', `/admin/tracking-plans/${encodeURIComponent(plan.id)}/sources`),
      ]);
      const violations = await Promise.all(sourceIds.map(async (id) => violationsTable(sources, id, (await api<{ violations: Violation[] }>('GET', `/admin/sources/${encodeURIComponent(id)}/violations`)).violations)));
      const connected = sourceIds.length === 0 ? h('p', { class: 'muted' }, 'No source is connected.') : h('p', { class: 'plan-sources' }, 'Sources: ', ...sourceIds.flatMap((id, i) => [...(i > 0 ? [', '] : []), sourceNamed(sources, id)]));
      return h('section', { 'data-plan-id': plan.id }, h('h2', { title: plan.id }, plan.name), plan.description && h('p', { class: 'muted' }, plan.description), connected, rulesTable(rules), ...violations);
    }),
  );
  if (page.left()) return;
  replace(page.main, h('h1', {}, 'Tracking plans'), ...(sections.length > 0 ? sections : [h('p', { class: 'muted' }, 'No tracking plans yet: POST /admin/tracking-plans.')]));
}
