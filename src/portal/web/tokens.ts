import { SCOPES } from '../../access/scopes';
import { formFor, guarded, holds } from './access';
import { api } from './api';
import { announce, badge, field, h, replace, time } from './dom';
import { FieldProblems } from './field-problems';
import type { Page } from './page';
import { showSecretOnce } from './secret-once';

interface TokenRow {
  id: string;
  name: string;
  scopes: string[];
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** What each scope opens, in the API's words (POST /admin/tokens). */
const SCOPE_WORDS: Record<(typeof SCOPES)[number], string> = {
  read: "sources, destinations, health, deliveries' metadata",
  'payloads:read': 'event bodies and answers about them',
  'destinations:write': 'sources, destinations, filters, webhooks, definitions',
  operate: 'redeliver, replays, syncs, clearing backpressure',
  regulations: 'suppress and delete users',
  admin: 'tokens and the audit log',
};

const TOKENS = '/admin/tokens';

/**
 * GET/POST/DELETE /admin/tokens (scope admin): the tokens by name and scope, never the tokens
 * themselves; a new one is shown once, at creation. A token grants only scopes it holds itself,
 * so the others are shown disabled, as the API would refuse them.
 */
export async function tokensPage(page: Page): Promise<void> {
  const { main } = page;
  const { tokens } = await api<{ tokens: TokenRow[] }>('GET', TOKENS);
  if (page.left()) return;
  const reload = () => tokensPage(page);
  const problems = new FieldProblems();
  const nameInput = h('input', { name: 'name', required: true, maxlength: 200, size: 40 });
  const expiresInput = h('input', { type: 'datetime-local', name: 'expiresAt' });
  const scopeBoxes = SCOPES.map((scope) => {
    const box = h('input', { type: 'checkbox', name: 'scopes', value: scope, disabled: !holds(scope) });
    return { scope, box, label: h('label', { class: 'scope-choice' }, box, ` ${scope} `, h('small', { class: 'muted' }, holds(scope) ? SCOPE_WORDS[scope] : 'this token lacks it, so it cannot grant it')) };
  });
  const form = () =>
    h(
      'form',
      {
        class: 'stacked',
        'aria-label': 'New token',
        onsubmit: async (event: Event) => {
          event.preventDefault();
          problems.clear();
          const scopes = scopeBoxes.filter(({ box }) => box.checked).map(({ scope }) => scope);
          const expiresAt = expiresInput.value ? new Date(expiresInput.value).toISOString() : undefined;
          try {
            const made = await api<{ token: string; name: string }>('POST', TOKENS, { name: nameInput.value.trim(), scopes, ...(expiresAt && { expiresAt }) });
            await reload();
            showSecretOnce(main, `Token ${made.name}`, made.token);
            announce(`Token ${made.name} created`);
          } catch (err) {
            problems.show(err);
          }
        },
      },
      field('Name (who or what uses it; 1–200 characters)', nameInput),
      problems.slot('name'),
      h('fieldset', { class: 'choices' }, h('legend', {}, 'Scopes (at least one; only scopes this token holds)'), ...scopeBoxes.map(({ label }) => label)),
      problems.slot('scopes'),
      field('Expires (in the future; empty: never)', expiresInput),
      problems.slot('expiresAt'),
      problems.general,
      h('button', { type: 'submit' }, 'Create token'),
    );
  const revoke = (token: TokenRow) =>
    guarded(
      'DELETE /admin/tokens/:id',
      h(
        'button',
        {
          type: 'button',
          class: 'secondary',
          onclick: async () => {
            if (!confirm(`Revoke the token ${token.name}? Every request with it is refused from now on.`)) return;
            await api('DELETE', `${TOKENS}/${encodeURIComponent(token.id)}`);
            await reload();
            announce(`Token ${token.name} revoked`);
          },
        },
        'Revoke',
      ),
    );
  replace(
    main,
    h('h1', {}, 'Tokens'),
    h(
      'p',
      { class: 'muted' },
      'Scoped admin tokens (swy_…). Switchyard keeps a hash of each: a token is shown once, when it is made, and never again. A revoked token is refused by every API process from its next request.',
    ),
    h('div', { class: 'created' }),
    h(
      'table',
      { class: 'tokens' },
      h('thead', {}, h('tr', {}, ...['Name', 'Scopes', 'Created', 'Expires', 'Last used', 'State', ''].map((title) => h('th', { scope: 'col' }, title)))),
      h(
        'tbody',
        {},
        ...tokens.map((token) =>
          h(
            'tr',
            { 'data-token-id': token.id },
            h('td', {}, h('span', { class: 'named', title: token.id }, token.name)),
            h('td', {}, token.scopes.join(', ')),
            h('td', {}, time(token.createdAt)),
            h('td', {}, token.expiresAt ? time(token.expiresAt) : 'never'),
            h('td', {}, token.lastUsedAt ? time(token.lastUsedAt) : '–'),
            h('td', {}, token.revokedAt ? h('span', {}, badge('revoked', 'failed'), ' ', time(token.revokedAt)) : badge('active', 'delivered')),
            h('td', {}, token.revokedAt ? '' : revoke(token)),
          ),
        ),
      ),
    ),
    h('h2', {}, 'New token'),
    formFor('POST /admin/tokens', 'Creating a token', form),
  );
}
