import { formFor, may } from './access';
import { api, type Source } from './api';
import { announce, field, h, replace, time } from './dom';
import { fieldErrors } from './field-errors';
import { named } from './names';
import type { Page } from './page';
import { showControls } from './plan-controls';
import { rulesPanel, type Rule } from './plan-rules';

interface TrackingPlan {
  id: string;
  name: string;
  description?: string;
  type: string;
}
/** `eventName`, `field` and `description` are names, absent for a token without payloads:read. */
interface Violation {
  eventType: string;
  eventName?: string;
  field?: string;
  violationType: string;
  description?: string;
  count: number;
  lastSeenAt: string;
}

/** A source by its name (its destinations' link, the id on hover); the id itself when it has none. */
const sourceNamed = (sources: Map<string, Source>, id: string) => {
  const source = sources.get(id);
  return named(new Map(source ? [[id, { name: source.name, href: `#/destinations?source=${encodeURIComponent(id)}` }]] : []), id);
};

/** A source's violations, each in the API's own sentence (the same words the API answers and forwards). */
function violationsTable(sources: Map<string, Source>, sourceId: string, violations: Violation[]): HTMLElement {
  if (violations.length === 0) return h('p', { class: 'muted', 'data-violations': sourceId }, 'Source ', sourceNamed(sources, sourceId), ': no violations in the last 24 h.');
  return h(
    'table',
    { class: 'violations', 'data-violations': sourceId },
    h('caption', {}, 'Source ', sourceNamed(sources, sourceId), ': violations in the last 24 h'),
    h('thead', {}, h('tr', {}, ...['Event', 'Violation', 'Type', 'Count', 'Last seen'].map((title) => h('th', { scope: 'col' }, title)))),
    h(
      'tbody',
      {},
      ...violations.map((v) =>
        h(
          'tr',
          { 'data-field': v.field },
          h('td', {}, `${v.eventType} ${v.eventName ?? ''}`.trim()),
          // Without payloads:read the API leaves names out, and the page says why the sentence is missing.
          h('td', { class: 'violation-text' }, v.description ?? h('small', { class: 'needs-scope' }, 'needs payloads:read')),
          h('td', {}, v.violationType),
          h('td', { class: 'count' }, String(v.count)),
          h('td', {}, time(v.lastSeenAt)),
        ),
      ),
    ),
  );
}

const PLAN_FIELDS = ['name', 'description'] as const;

/** A plan's name and description: a form that creates (no plan) or edits one; the API's 400 beside the field it names. */
function planForm(plan: TrackingPlan | undefined, reload: () => Promise<void>): HTMLElement {
  const inputs = { name: h('input', { name: 'name', size: 30, value: plan?.name ?? '' }), description: h('input', { name: 'description', size: 50, value: plan?.description ?? '' }) };
  const { beside: errors, form: formError, clear, show } = fieldErrors(PLAN_FIELDS, inputs);
  return h(
    'form',
    {
      'aria-label': plan ? 'Plan' : 'Create a tracking plan',
      class: 'plan-form',
      onsubmit: async (event: Event) => {
        event.preventDefault();
        clear();
        const body = { name: inputs.name.value, description: inputs.description.value };
        try {
          if (plan) await api('PATCH', `/admin/tracking-plans/${encodeURIComponent(plan.id)}`, body);
          else await api('POST', '/admin/tracking-plans', body);
        } catch (err) {
          return show(err);
        }
        await reload();
        announce(plan ? `Plan ${body.name} saved` : `Plan ${body.name} created`);
      },
    },
    field('Name', inputs.name),
    errors.name,
    field('Description', inputs.description),
    errors.description,
    h('button', { type: 'submit' }, plan ? 'Save plan' : 'Create plan'),
    formError,
  );
}

/** The sources connected to a plan by name, with a disconnect each and a connect form, for a token that may. */
function sourcesPanel(plan: TrackingPlan, sourceIds: string[], sources: Map<string, Source>, reload: () => Promise<void>): HTMLElement {
  const path = `/admin/tracking-plans/${encodeURIComponent(plan.id)}/sources`;
  const mayDisconnect = may('DELETE /admin/tracking-plans/:id/sources/:sourceId');
  const listed =
    sourceIds.length === 0
      ? h('p', { class: 'muted plan-sources' }, 'No source is connected.')
      : h(
          'p',
          { class: 'plan-sources' },
          'Sources: ',
          ...sourceIds.flatMap((id, i) => [
            ...(i > 0 ? [', '] : []),
            sourceNamed(sources, id),
            mayDisconnect && ' ',
            mayDisconnect &&
              h(
                'button',
                {
                  type: 'button',
                  class: 'secondary small',
                  'data-disconnect': id,
                  'aria-label': `Disconnect ${sources.get(id)?.name ?? id}`,
                  onclick: async () => {
                    await api('DELETE', `${path}/${encodeURIComponent(id)}`);
                    await reload();
                    announce(`Source ${sources.get(id)?.name ?? id} disconnected`);
                  },
                },
                'Disconnect',
              ),
          ]),
        );
  const unconnected = [...sources.values()].filter((s) => !sourceIds.includes(s.id));
  const error = h('span', { class: 'error field-error', role: 'alert', 'data-error-for': 'sourceId' });
  const select = h('select', { name: 'sourceId' }, ...unconnected.map((s) => h('option', { value: s.id }, s.name)));
  const connect = formFor('POST /admin/tracking-plans/:id/sources', 'Connecting a source', () =>
    unconnected.length === 0
      ? h('p', { class: 'muted' }, 'Every source is connected here.')
      : h(
          'form',
          {
            'aria-label': 'Connect a source',
            onsubmit: async (event: Event) => {
              event.preventDefault();
              error.textContent = '';
              const name = sources.get(select.value)?.name ?? select.value;
              try {
                await api('POST', path, { sourceId: select.value });
              } catch (err) {
                // A source has at most one plan: the API's 409 says so, shown beside the choice.
                return void (error.textContent = err instanceof Error ? err.message : String(err));
              }
              await reload();
              announce(`Source ${name} connected`);
            },
          },
          field('Source', select),
          h('button', { type: 'submit' }, 'Connect'),
          error,
        ),
  );
  return h('div', { class: 'plan-sources-panel' }, listed, connect);
}

/** Every tracking plan: its name and description, connected sources, rules, each source's controls and violations; editable for a token that may. */
export async function trackingPlansPage(page: Page): Promise<void> {
  const reload = () => trackingPlansPage(page);
  const [{ trackingPlans }, { sources: sourceList }] = await Promise.all([api<{ trackingPlans: TrackingPlan[] }>('GET', '/admin/tracking-plans'), api<{ sources: Source[] }>('GET', '/admin/sources')]);
  const sources = new Map(sourceList.map((source) => [source.id, source]));
  const nameOf = (id: string) => sourceNamed(sources, id);
  const sections = await Promise.all(
    trackingPlans.map(async (plan) => {
      const [{ rules }, { sourceIds }] = await Promise.all([
        api<{ rules: Rule[] }>('GET', `/admin/tracking-plans/${encodeURIComponent(plan.id)}/rules?count=1000`),
        api<{ sourceIds: string[] }>('GET', `/admin/tracking-plans/${encodeURIComponent(plan.id)}/sources`),
      ]);
      const perSource = await Promise.all(
        sourceIds.map(async (id) => {
          const controls = h('div', { class: 'controls-panel' });
          const [violations] = await Promise.all([api<{ violations: Violation[] }>('GET', `/admin/sources/${encodeURIComponent(id)}/violations`), showControls(controls, id, sourceList, nameOf, reload)]);
          return [controls, violationsTable(sources, id, violations.violations)];
        }),
      );
      const editable = may('PATCH /admin/tracking-plans/:id');
      const remove =
        may('DELETE /admin/tracking-plans/:id') &&
        h(
          'button',
          {
            type: 'button',
            class: 'secondary',
            onclick: async () => {
              if (!confirm(`Delete the tracking plan ${plan.name}? Its sources are disconnected.`)) return;
              await api('DELETE', `/admin/tracking-plans/${encodeURIComponent(plan.id)}`);
              await reload();
              announce(`Plan ${plan.name} deleted`);
            },
          },
          'Delete plan',
        );
      return h(
        'section',
        { 'data-plan-id': plan.id, class: 'card' },
        h('h2', { title: plan.id }, plan.name, ' ', h('small', { class: 'id' }, plan.id)),
        plan.description && h('p', { class: 'muted plan-description' }, plan.description),
        editable && h('details', { class: 'plan-edit' }, h('summary', {}, 'Edit name and description'), planForm(plan, reload), remove),
        sourcesPanel(plan, sourceIds, sources, reload),
        rulesPanel(plan.id, rules, reload),
        ...perSource.flat(),
      );
    }),
  );
  if (page.left()) return;
  replace(
    page.main,
    h('h1', {}, 'Tracking plans'),
    formFor('POST /admin/tracking-plans', 'Creating a tracking plan', () => h('details', { class: 'plan-create' }, h('summary', {}, 'Create a tracking plan'), planForm(undefined, reload))),
    ...(sections.length > 0 ? sections : [h('p', { class: 'muted' }, 'No tracking plans yet.')]),
  );
}
