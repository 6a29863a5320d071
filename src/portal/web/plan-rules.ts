import { may } from './access';
import { api } from './api';
import { announce, field, h } from './dom';
import { fieldErrors } from './field-errors';

export interface Rule {
  type: string;
  key?: string;
  version: number;
  jsonSchema: { properties?: { properties?: { required?: string[]; properties?: Record<string, unknown> }; traits?: { required?: string[]; properties?: Record<string, unknown> } } } & Record<string, unknown>;
}

const RULE_TYPES = ['TRACK', 'IDENTIFY', 'GROUP', 'PAGE', 'SCREEN', 'COMMON'];
const FIELDS = ['type', 'key', 'version', 'jsonSchema'] as const;
const RULES_ROUTE = 'PATCH /admin/tracking-plans/:id/rules';

/** The names a rule plans and those it requires, as the page lists them (the schema itself is the API's). */
function plannedOf(rule: Rule): string {
  const section = rule.jsonSchema.properties?.properties ?? rule.jsonSchema.properties?.traits;
  const names = Object.keys(section?.properties ?? {});
  const required = new Set(section?.required ?? []);
  return names.map((name) => (required.has(name) ? `${name}*` : name)).join(', ') || '–';
}

const ruleId = (rule: Rule) => `${rule.type}:${rule.key ?? ''}:${rule.version}`;
const ruleWords = (rule: Rule) => `${rule.type}${rule.key ? ` ${rule.key}` : ''} version ${rule.version}`;

/**
 * A plan's rules: the table, and for a token that may change them a form that adds a rule or edits
 * one (PATCH: the rule of that type, key and version is replaced), and a delete per rule. The
 * schema is JSON the API compiles: its 400 is shown beside the field it names.
 */
export function rulesPanel(planId: string, rules: Rule[], reload: () => Promise<void>): HTMLElement {
  const editable = may(RULES_ROUTE);
  const path = `/admin/tracking-plans/${encodeURIComponent(planId)}/rules`;
  const inputs = {
    type: h('select', { name: 'type' }, ...RULE_TYPES.map((t) => h('option', { value: t }, t))),
    key: h('input', { name: 'key', size: 30, placeholder: 'the event name (TRACK)' }),
    version: h('input', { name: 'version', type: 'number', value: 1, size: 4 }),
    jsonSchema: h('textarea', { name: 'jsonSchema', rows: 8, cols: 80, spellcheck: 'false' }),
  };
  inputs.jsonSchema.value = JSON.stringify({ properties: { properties: { type: 'object', properties: {}, required: [] } } }, null, 2);
  const { beside: errors, form: formError, clear: clearErrors, show: showError } = fieldErrors(FIELDS, inputs);
  const submit = h('button', { type: 'submit' }, 'Add rule');
  const edit = (rule: Rule) => {
    clearErrors();
    inputs.type.value = rule.type;
    inputs.key.value = rule.key ?? '';
    inputs.version.value = String(rule.version);
    inputs.jsonSchema.value = JSON.stringify(rule.jsonSchema, null, 2);
    submit.textContent = 'Save rule';
    inputs.jsonSchema.focus();
  };

  const rows = rules.map((rule) =>
    h(
      'tr',
      { 'data-rule': ruleId(rule) },
      h('td', {}, rule.type),
      h('td', {}, rule.key ?? '–'),
      h('td', { class: 'count' }, String(rule.version)),
      h('td', {}, plannedOf(rule)),
      editable &&
        h(
          'td',
          {},
          h('button', { type: 'button', class: 'secondary', onclick: () => edit(rule) }, 'Edit'),
          ' ',
          h(
            'button',
            {
              type: 'button',
              class: 'secondary',
              onclick: async () => {
                if (!confirm(`Delete the rule ${ruleWords(rule)}?`)) return;
                await api('DELETE', path, { rules: [{ type: rule.type, ...(rule.key !== undefined && { key: rule.key }), version: rule.version }] });
                await reload();
                announce(`Rule ${ruleWords(rule)} deleted`);
              },
            },
            'Delete',
          ),
        ),
    ),
  );
  const table =
    rules.length === 0
      ? h('p', { class: 'muted' }, 'No rules yet.')
      : h(
          'table',
          { class: 'rules' },
          h('caption', {}, 'Rules (* required)'),
          h('thead', {}, h('tr', {}, ...['Type', 'Event', 'Version', 'Planned names', ...(editable ? [''] : [])].map((title) => h('th', { scope: 'col' }, title)))),
          h('tbody', {}, ...rows),
        );
  if (!editable) return table;

  const form = h(
    'form',
    {
      'aria-label': 'Rule',
      class: 'rule-form',
      onsubmit: async (event: Event) => {
        event.preventDefault();
        clearErrors();
        let jsonSchema: unknown;
        try {
          jsonSchema = JSON.parse(inputs.jsonSchema.value);
        } catch (err) {
          // Not JSON at all: there is nothing to send the API (it would answer the same).
          return showError(`jsonSchema: not JSON (${err instanceof Error ? err.message : String(err)})`);
        }
        const key = inputs.key.value;
        const rule = { type: inputs.type.value, ...(key !== '' && { key }), version: Number(inputs.version.value), jsonSchema };
        try {
          await api('PATCH', path, { rules: [rule] });
        } catch (err) {
          return showError(err);
        }
        await reload();
        announce(`Rule ${ruleWords(rule as Rule)} saved`);
      },
    },
    field('Type', inputs.type),
    errors.type,
    field('Event name (key)', inputs.key),
    errors.key,
    field('Version', inputs.version),
    errors.version,
    field('JSON Schema of the whole message', inputs.jsonSchema),
    errors.jsonSchema,
    submit,
    formError,
  );
  return h('div', { class: 'rules-panel' }, table, h('h3', {}, 'Add or edit a rule'), form);
}
