import { may } from './access';
import { h, replace } from './dom';
import type { PortalSettings } from './api';
import type { Section } from './sections';

/**
 * The header once logged in: a link per section the token may open (or may be told it cannot),
 * who is logged in, and Log out. Before login the header holds the product's name only.
 */
export function showNav(nav: HTMLElement, sections: Section[], settings: PortalSettings | undefined, current: string | undefined, onLogout: () => void): void {
  if (!settings) {
    replace(nav);
    nav.hidden = true;
    return;
  }
  const { token } = settings;
  replace(
    nav,
    ...sections
      .filter((section) => !section.hideWhenForbidden || may(section.reads))
      .map((section) => h('a', { href: `#/${section.path}`, 'aria-current': section.path === current ? 'page' : undefined }, section.label)),
    h('span', { id: 'whoami', class: 'muted' }, `${token.name} (${token.scopes.join(', ')})`),
    h('button', { type: 'button', id: 'logout', class: 'secondary', onclick: onLogout }, 'Log out'),
  );
  nav.hidden = false;
}
