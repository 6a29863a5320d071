import { formFor, guarded } from './access';
import { api, ApiFailure, type Destination } from './api';
import { announce, copy, field, h, replace } from './dom';

/** A change to the destination (PATCH), then the page as it is now; announced once shown. */
export type Patch = (body: Record<string, unknown>, done: string) => Promise<void>;

const PATCH_ROUTE = 'PATCH /admin/destinations/:id';

/** `whsec_` + base64 of 32 random bytes: a Standard Webhooks secret made in the browser, sent once. */
function newSigningSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return `whsec_${btoa(String.fromCharCode(...bytes))}`;
}

/** "a, b" or one per line → category ids, blanks dropped (the API checks the limits and names the rule broken). */
export function parseCategories(text: string): string[] {
  return text
    .split(/[,\n]/)
    .map((c) => c.trim())
    .filter(Boolean);
}

/** What a destination's consent settings mean, in words. */
function consentSummary({ categories, whenAbsent }: Destination['consent']): string {
  const needs = categories.length === 0 ? 'Needs no consent category: gets events whatever their consent.' : `Gets an event only if it grants every one of: ${categories.join(', ')}.`;
  return `${needs} Events without consent preferences are ${whenAbsent === 'drop' ? 'dropped' : 'delivered'}.`;
}

/** The rate limit (hold and resume are in the page's header). */
export function rateLimitPanel(destination: Destination, into: HTMLElement, patch: Patch): void {
  const rateInput = h('input', { type: 'number', name: 'maxRequestsPerSecond', min: 1, max: 10000, step: 1, value: destination.maxRequestsPerSecond ?? '' });
  replace(
    into,
    h('p', { class: 'rate-state' }, destination.maxRequestsPerSecond === null ? 'No rate limit.' : `Rate limit: ${destination.maxRequestsPerSecond} requests per second.`),
    formFor(PATCH_ROUTE, 'Changing the rate limit', () =>
      h(
        'form',
        {
          'aria-label': 'Rate limit',
          onsubmit: (event: Event) => {
            event.preventDefault();
            void patch({ maxRequestsPerSecond: rateInput.value === '' ? null : Number(rateInput.value) }, 'Rate limit saved');
          },
        },
        field('Rate limit (requests per second, empty for none)', rateInput),
        h('button', { type: 'submit' }, 'Save rate limit'),
      ),
    ),
  );
}

/** The consent categories it needs and what happens to events without preferences. */
export function consentPanel(destination: Destination, into: HTMLElement, patch: Patch): void {
  const categoriesInput = h('input', { name: 'consentCategories', size: 40, value: destination.consent.categories.join(', ') });
  const whenAbsentInput = h(
    'select',
    { name: 'whenAbsent' },
    h('option', { value: 'deliver', selected: destination.consent.whenAbsent === 'deliver' }, 'deliver them'),
    h('option', { value: 'drop', selected: destination.consent.whenAbsent === 'drop' }, 'drop them'),
  );
  replace(
    into,
    h('p', { class: 'consent-state' }, consentSummary(destination.consent)),
    formFor(PATCH_ROUTE, 'Changing consent settings', () =>
      h(
        'form',
        {
          'aria-label': 'Consent',
          onsubmit: (event: Event) => {
            event.preventDefault();
            void patch({ consent: { categories: parseCategories(categoriesInput.value), whenAbsent: whenAbsentInput.value } }, 'Consent settings saved');
          },
        },
        field('Consent categories it needs, comma-separated (empty for none)', categoriesInput),
        field('Events without consent preferences', whenAbsentInput),
        h('button', { type: 'submit' }, 'Save consent'),
      ),
    ),
  );
}

/** The shared secret (X-Signature) and the Standard Webhooks signing secret: write-only, shown once when generated. */
export function signingPanel(destination: Destination, into: HTMLElement, patch: Patch): void {
  const path = `/admin/destinations/${encodeURIComponent(destination.id)}`;
  const secretInput = h('input', { type: 'password', name: 'sharedSecret', autocomplete: 'off', required: true });
  const signingOut = h('div');
  const generate = async () => {
    const secret = newSigningSecret();
    try {
      await api('PATCH', path, { signingSecret: secret });
    } catch (err) {
      announce(err instanceof ApiFailure ? err.message : String(err));
      return;
    }
    const box = h('input', { readonly: true, value: secret, size: 60 });
    replace(
      signingOut,
      h('section', { class: 'card once' }, h('p', {}, 'New signing secret, shown once: give it to the receiver.'), field('Signing secret', box), h('button', { type: 'button', onclick: () => copy(secret, box) }, 'Copy')),
    );
  };
  replace(
    into,
    h('h3', {}, 'Shared secret (X-Signature)'),
    h('p', { class: 'shared-secret-state' }, destination.sharedSecretSet ? 'Set: every request carries X-Signature.' : 'Not set: requests are not signed with X-Signature.'),
    formFor(PATCH_ROUTE, 'Setting the shared secret', () =>
      h(
        'form',
        {
          'aria-label': 'Shared secret',
          onsubmit: (event: Event) => {
            event.preventDefault();
            void patch({ sharedSecret: secretInput.value }, 'Shared secret saved');
          },
        },
        field(destination.sharedSecretSet ? 'New shared secret (rotates it)' : 'Shared secret', secretInput),
        h('button', { type: 'submit' }, destination.sharedSecretSet ? 'Rotate shared secret' : 'Set shared secret'),
        destination.sharedSecretSet && h('button', { type: 'button', class: 'secondary', onclick: () => patch({ sharedSecret: null }, 'Shared secret cleared') }, 'Clear'),
      ),
    ),
    h('h3', {}, 'Standard Webhooks signature'),
    h(
      'p',
      {},
      destination.signingSecretSet ? 'On: requests carry webhook-id, webhook-timestamp and webhook-signature.' : 'Off.',
      destination.previousSigningSecretUntil && ` The previous secret also signs until ${new Date(destination.previousSigningSecretUntil).toLocaleString()}.`,
    ),
    h(
      'div',
      {},
      guarded(PATCH_ROUTE, h('button', { type: 'button', onclick: generate }, destination.signingSecretSet ? 'Rotate signing secret' : 'Generate signing secret')),
      ' ',
      destination.signingSecretSet && guarded(PATCH_ROUTE, h('button', { type: 'button', class: 'secondary', onclick: () => patch({ signingSecret: null }, 'Standard Webhooks signature off') }, 'Switch off')),
    ),
    signingOut,
  );
}
