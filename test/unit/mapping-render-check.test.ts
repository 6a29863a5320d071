import { findMappingsViolation } from '../../src/mappings/validate-mappings';
import type { ActionsMapping } from '../../src/mappings/types';

/**
 * A mapping the kit's validator passes but that cannot render is refused at save, the
 * 400 naming the mapping, the field (a JSON pointer into data), the directive and the kit's message.
 */
const mapping = (data: Record<string, unknown>, trigger = 'all'): ActionsMapping => ({ name: 'Orders', enabled: true, trigger, settings: { url: 'https://hooks.example.com/m', method: 'POST', headers: {}, data } });
const rule = (data: Record<string, unknown>, trigger?: string) => findMappingsViolation([mapping(data, trigger)]);

describe('a mapping is rendered at save against a synthetic message of each type its trigger can match', () => {
  it('leaves the mapping as written (the kit writes @replace\'s defaults into what it renders)', () => {
    const data = { slug: { '@replace': { pattern: ' ', value: { '@path': '$.event' } } } };
    expect(rule(data)).toBeUndefined();
    expect(data).toEqual({ slug: { '@replace': { pattern: ' ', value: { '@path': '$.event' } } } });
  });

  it.each([
    [{ plan: { '@if': { exist: { '@path': '$.traits.plan' }, then: 1, else: 2 } } }, 'type = "identify"', 'mapping "Orders": /plan: @if cannot render the synthetic identify message (a type its trigger can match): @if requires an "exists" key or a "blank" key'],
    [{ '@if': { exist: { '@path': '$.event' }, then: 1 } }, 'all', 'mapping "Orders": /: @if cannot render the synthetic track message (a type its trigger can match): @if requires an "exists" key or a "blank" key'],
    [{ a: { b: [{ c: { '@if': { exist: 1, then: 2 } } }] } }, 'type = "page"', 'mapping "Orders": /a/b/0/c: @if cannot render the synthetic page message (a type its trigger can match): @if requires an "exists" key or a "blank" key'],
  ])('refuses %j (trigger %s)', (data, trigger, expected) => {
    expect(rule(data, trigger)).toEqual({ field: 'mappings[0].settings.data', rule: expected });
  });

  it.each([
    [{ plan: { '@if': { exists: { '@path': '$.traits.plan' }, then: { '@path': '$.traits.plan' }, else: 'free' } } }, 'type = "identify"'],
    [{ items: { '@arrayPath': ['$.properties.products', { sku: { '@path': '$.sku' } }] } }, 'all'],
    [{ q: { '@liquid': '{{ properties.query | url_decode }}' } }, 'all'],
    [{ text: { '@template': 'Order {{properties.orderId}}' } }, 'type = "track"'],
    [{ '@path': '$.' }, 'all'],
    // A trigger no type can meet renders nothing: nothing to refuse.
    [{ a: { '@if': { exist: 1, then: 2 } } }, 'type = "track" and type = "identify"'],
  ])('saves %j (trigger %s)', (data, trigger) => {
    expect(rule(data, trigger)).toBeUndefined();
  });
});
