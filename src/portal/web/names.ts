import { may } from './access';
import { api, type Destination, type Source } from './api';
import { h } from './dom';

/** What an id stands for: its name, and where the portal shows it. */
export interface Named {
  name: string;
  href?: string;
}

/** Ids → names for the ids the portal shows (sources, destinations, plans, tokens), read once per page. */
export type Names = Map<string, Named>;

/** Every source's destinations, by source (one request per source, in parallel). */
export async function destinationsBySource(sources: Source[]): Promise<Map<string, Destination[]>> {
  const lists = await Promise.all(sources.map((s) => api<{ destinations: Destination[] }>('GET', `/admin/sources/${encodeURIComponent(s.id)}/destinations`)));
  return new Map(sources.map((s, i) => [s.id, lists[i].destinations]));
}

export async function loadNames(sources?: Source[]): Promise<Names> {
  const names: Names = new Map();
  const all = sources ?? (await api<{ sources: Source[] }>('GET', '/admin/sources')).sources;
  for (const s of all) names.set(s.id, { name: s.name, href: `#/destinations?source=${encodeURIComponent(s.id)}` });
  const [bySource, plans, tokens] = await Promise.all([
    destinationsBySource(all),
    may('GET /admin/tracking-plans') ? api<{ trackingPlans: { id: string; name: string }[] }>('GET', '/admin/tracking-plans').then((r) => r.trackingPlans) : Promise.resolve([]),
    // Token names only for a token that may list them (admin): the audit log's readers.
    may('GET /admin/tokens') ? api<{ tokens: { id: string; name: string }[] }>('GET', '/admin/tokens').then((r) => r.tokens) : Promise.resolve([]),
  ]);
  for (const list of bySource.values()) for (const d of list) names.set(d.id, { name: d.name, href: `#/destinations/${encodeURIComponent(d.id)}` });
  for (const p of plans) names.set(p.id, { name: p.name, href: '#/tracking-plans' });
  for (const t of tokens) names.set(t.id, { name: t.name });
  return names;
}

/** An id as people read it: its name (a link where it has a page), the id on hover; the id itself when unknown (deleted, or of a kind without a name). */
export function named(names: Names, id: string, link = true): HTMLElement {
  const known = names.get(id);
  if (!known) return pair(names, id, link) ?? inside(names, id, link) ?? h('code', { class: 'id' }, id);
  const label = link && known.href ? h('a', { href: known.href }, known.name) : known.name;
  return h('span', { class: 'named', title: id, 'data-id': id }, label);
}

/** The same, with the id in small type after the name (headers and facts, where there is room). */
export function namedWithId(names: Names, id: string, link = true): HTMLElement {
  const known = names.get(id);
  if (!known) return h('code', { class: 'id' }, id);
  return h('span', { class: 'named', 'data-id': id }, named(names, id, link), ' ', h('small', { class: 'id' }, id));
}

/** A target made of two known ids (a plan's connection to a source, `tp_…:src_…`): both names, the pair on hover. */
function pair(names: Names, id: string, link: boolean): HTMLElement | undefined {
  const parts = id.split(':');
  if (parts.length !== 2 || !parts.every((part) => names.has(part))) return undefined;
  return h('span', { class: 'named', title: id, 'data-id': id }, named(names, parts[0], link), ' → ', named(names, parts[1], link));
}

/**
 * A target inside a known one (an audit row's `src_…/<messageId>` for a source's message,
 * `src_…/function-requests`, `dst_…/webhooks/0`): the known one's name, then the rest; the whole
 * on hover.
 */
function inside(names: Names, id: string, link: boolean): HTMLElement | undefined {
  const slash = id.indexOf('/');
  if (slash <= 0 || !names.has(id.slice(0, slash))) return undefined;
  return h('span', { class: 'named', title: id, 'data-id': id }, named(names, id.slice(0, slash), link), ' / ', h('code', {}, id.slice(slash + 1)));
}
