import { may } from './access';
import { api, type Source } from './api';
import { announce, h, replace } from './dom';
import { fieldErrors } from './field-errors';

/** A source's schema controls as GET /admin/sources/:id/settings answers them (src/plans/schema-controls.ts). */
export interface Controls {
  track: Record<string, boolean | string>;
  identify: Record<string, boolean | string>;
  group: Record<string, boolean | string>;
  forwardingViolationsTo?: string;
  forwardingBlockedEventsTo?: string;
}

type Choice = [value: string, words: string];
const LET_THROUGH = 'report, let it through';
const bool = (yes: string, no: string): Choice[] => [
  ['true', yes],
  ['false', no],
];

/** Each setting in words: the section, the setting, what it decides, and its choices (the API's values, said as a person would). */
const SETTINGS: Array<{ section: 'track' | 'identify' | 'group'; key: string; label: string; choices: Choice[] }> = [
  { section: 'track', key: 'allowUnplannedEvents', label: 'An event no rule plans', choices: bool(LET_THROUGH, 'block it') },
  { section: 'track', key: 'allowUnplannedEventProperties', label: 'Properties its rule does not plan', choices: bool('report, keep them', 'omit them') },
  { section: 'track', key: 'allowEventOnViolations', label: 'An event that breaks its rule', choices: bool(LET_THROUGH, 'block it') },
  { section: 'track', key: 'allowPropertiesOnViolations', label: 'Properties that break its rule (event let through)', choices: bool('report, keep them', 'omit them') },
  {
    section: 'track',
    key: 'commonEventOnViolations',
    label: 'Breaks the COMMON rule',
    choices: [
      ['ALLOW', LET_THROUGH],
      ['BLOCK', 'block it'],
      ['OMIT_PROPERTIES', 'omit the offending properties'],
    ],
  },
  ...(['identify', 'group'] as const).flatMap((section) => [
    { section, key: 'allowUnplannedTraits', label: 'Traits its rule does not plan', choices: bool('report, keep them', 'omit them') },
    { section, key: 'allowTraitsOnViolations', label: 'Traits that break its rule', choices: bool('report, keep them', 'omit them') },
    {
      section,
      key: 'commonEventOnViolations',
      label: 'Breaks the COMMON rule',
      choices: [
        ['ALLOW', LET_THROUGH],
        ['BLOCK', 'block it'],
        ['OMIT_TRAITS', 'omit the offending traits'],
      ] as Choice[],
    },
  ]),
];
const FORWARDING = [
  ['forwardingViolationsTo', 'Send each violation (a Violation Generated track) into'],
  ['forwardingBlockedEventsTo', 'Send each blocked event into'],
] as const;
const FIELDS = ['track', 'identify', 'group', ...FORWARDING.map(([key]) => key)] as const;
const SECTION_TITLE = { track: 'Track, page and screen calls', identify: 'Identify calls', group: 'Group calls' } as const;

const ROUTE = 'PATCH /admin/sources/:id/settings';

/**
 * A connected source's controls (block or report) and forwarding, one row a setting: a select for a
 * token that may change them, the setting in words for one that may not. Saved as one PATCH; the
 * API's 400 is shown beside the setting it names.
 */
export function controlsPanel(sourceId: string, controls: Controls, sources: Source[], nameOf: (id: string) => Node, reload: () => Promise<void>): HTMLElement {
  const editable = may(ROUTE);
  const selects = new Map<string, HTMLSelectElement>();
  const { beside: errors, form: formError, clear: clearErrors, show } = fieldErrors(FIELDS);

  const cell = (id: string, value: string, choices: Choice[], label: string): HTMLElement => {
    if (!editable) return h('td', { 'data-setting': id }, choices.find(([v]) => v === value)?.[1] ?? value);
    const select = h('select', { name: id, 'aria-label': label }, ...choices.map(([v, words]) => h('option', { value: v, selected: v === value }, words)));
    selects.set(id, select);
    return h('td', { 'data-setting': id }, select);
  };
  const rows: HTMLElement[] = [];
  for (const section of ['track', 'identify', 'group'] as const) {
    rows.push(h('tr', {}, h('th', { colspan: 2, scope: 'rowgroup' }, SECTION_TITLE[section], ' ', errors[section])));
    for (const setting of SETTINGS.filter((s) => s.section === section)) {
      const label = `${SECTION_TITLE[section]}: ${setting.label}`;
      rows.push(h('tr', {}, h('td', {}, setting.label), cell(`${section}.${setting.key}`, String(controls[section][setting.key]), setting.choices, label)));
    }
  }
  rows.push(h('tr', {}, h('th', { colspan: 2, scope: 'rowgroup' }, 'Forwarding')));
  for (const [key, label] of FORWARDING) {
    const target = controls[key];
    const others = sources.filter((s) => s.id !== sourceId);
    const choices: Choice[] = [['', 'nowhere'], ...others.map((s): Choice => [s.id, s.name])];
    const shown = editable ? cell(key, target ?? '', choices, label) : h('td', { 'data-setting': key }, target ? nameOf(target) : 'nowhere');
    rows.push(h('tr', {}, h('td', {}, label, ' ', errors[key]), shown));
  }
  const table = h('table', { class: 'plan-controls', 'data-controls': sourceId }, h('caption', {}, 'Source ', nameOf(sourceId), ': what the plan does'), h('tbody', {}, ...rows));
  if (!editable) return table;

  const patchBody = () => {
    const body: Record<string, unknown> = {};
    for (const setting of SETTINGS) {
      const value = selects.get(`${setting.section}.${setting.key}`)!.value;
      const section = (body[setting.section] ??= {}) as Record<string, unknown>;
      section[setting.key] = value === 'true' ? true : value === 'false' ? false : value;
    }
    for (const [key] of FORWARDING) body[key] = selects.get(key)!.value || null;
    return body;
  };
  return h(
    'form',
    {
      'aria-label': 'Schema controls',
      class: 'controls-form',
      'data-controls-form': sourceId,
      onsubmit: async (event: Event) => {
        event.preventDefault();
        clearErrors();
        try {
          await api('PATCH', `/admin/sources/${encodeURIComponent(sourceId)}/settings`, patchBody());
        } catch (err) {
          return show(err);
        }
        await reload();
        announce('Controls saved');
      },
    },
    table,
    h('button', { type: 'submit' }, 'Save controls'),
    formError,
  );
}

/** Replaces a panel's content with the controls, read now. */
export async function showControls(into: HTMLElement, sourceId: string, sources: Source[], nameOf: (id: string) => Node, reload: () => Promise<void>): Promise<void> {
  const controls = await api<Controls>('GET', `/admin/sources/${encodeURIComponent(sourceId)}/settings`);
  replace(into, controlsPanel(sourceId, controls, sources, nameOf, reload));
}
