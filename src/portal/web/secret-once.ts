import { copy, h } from './dom';

/**
 * A secret the API answers once (a token, a generated signing secret): shown here with a Copy
 * button and never again; the page that lists it later has no way to read it back.
 */
export function secretOnce(label: string, secret: string): HTMLElement {
  const input = h('input', { readonly: true, value: secret, size: 60, class: 'secret-value', 'aria-label': label });
  return h(
    'div',
    { class: 'secret-once', role: 'status' },
    h('p', {}, h('strong', {}, label), ': shown this once. Copy it now; Switchyard keeps no readable copy.'),
    input,
    ' ',
    h('button', { type: 'button', class: 'secondary', onclick: () => copy(secret, input) }, 'Copy'),
  );
}

/** Shows a secret in the page's `.created` slot, once the page has been read again with the new row listed. */
export function showSecretOnce(main: HTMLElement, label: string, secret: string): void {
  main.querySelector('.created')?.replaceWith(h('div', { class: 'created' }, secretOnce(label, secret)));
}
