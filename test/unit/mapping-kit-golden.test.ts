import { renderMappingBody } from '../../src/mappings/render-mapping';

/**
 * Golden tests: the examples Segment documents for its mapping kit
 * (segmentio/action-destinations packages/core/src/mapping-kit/README.md), rendered through
 * Switchyard's render step, must come out as documented.
 */
const render = (data: Record<string, unknown>, event: Record<string, unknown>) => {
  const rendered = renderMappingBody({ name: 'golden', settings: { url: 'https://example.com', method: 'POST', headers: {}, data } }, event);
  if (!rendered.ok) throw new Error(rendered.reason);
  return JSON.parse(rendered.body) as unknown;
};
/** The README's examples of a single directive, wrapped in a field (a mapping's data is an object). */
const one = (directive: Record<string, unknown>, event: Record<string, unknown>) => (render({ v: directive }, event) as { v?: unknown }).v;

describe("Segment's mapping kit examples, rendered as documented", () => {
  it('the introduction: raw values, @path and @template together', () => {
    const event = { type: 'track', event: 'Sweater On', context: { library: { name: 'analytics.js', version: '2.11.1' } }, properties: { neighborhood: 'Latrobe', noun: 'neighbor', sweaterColor: 'red' } };
    expect(render({ name: 'Mr. Rogers', neighborhood: { '@path': '$.properties.neighborhood' }, greeting: { '@template': "Won't you be my {{properties.noun}}?" } }, event)).toEqual({
      name: 'Mr. Rogers',
      neighborhood: 'Latrobe',
      greeting: "Won't you be my neighbor?",
    });
  });

  it('mixing raw values and directives', () => {
    const traits = { name: 'Peter Gibbons', email: 'peter@example.com', plan: 'premium', logins: 5, address: { street: '6th St', city: 'San Francisco', state: 'CA', postalCode: '94103', country: 'USA' } };
    expect(render({ action: 'create', userId: { '@path': '$.traits.email' }, userProperties: { '@path': '$.traits' } }, { traits })).toEqual({ action: 'create', userId: 'peter@example.com', userProperties: traits });
  });

  it('removes undefined values from objects but keeps null', () => {
    expect(render({ foo: { '@path': '$.a' }, bar: { '@path': '$.b' }, baz: null }, { a: 1 })).toEqual({ foo: 1, baz: null });
  });

  it.each([
    [{ exists: { '@path': '$.a' }, then: 'yep', else: 'nope' }, 'yep'],
    [{ exists: { '@path': '$.nope' }, then: 'yep', else: 'nope' }, 'nope'],
  ])('@if %j → %j', (condition, expected) => {
    expect(one({ '@if': condition }, { a: 'cool', b: true })).toBe(expected);
  });

  it('@if without the branch it takes leaves the field out', () => {
    expect(render({ 'foo-exists': { '@if': { exists: { '@path': '$.foo' }, then: true } } }, { a: 'cool' })).toEqual({});
    expect(render({ a: { '@if': { exists: { '@path': '$.oops' }, then: { '@path': '$.a' } } } }, { a: 'cool' })).toEqual({});
  });

  it.each([
    ['$.hello', 'world'],
    ['$.foo.bar', 42],
    ['$.foo.baz[0].num', 1],
  ])('@path %s', (path, expected) => {
    expect(one({ '@path': path }, { foo: { bar: 42, baz: [{ num: 1 }, { num: 2 }] }, hello: 'world' })).toBe(expected);
  });

  it.each([
    ['Hello, {{traits.name}}!', 'Hello, Mr. Rogers!'],
    ['Hello, {{traits.fullName}}!', 'Hello, !'],
    // The README prints "Mr.Rogers (abc123)", a typo: the kit keeps the space of the value.
    ['{{traits.name}} ({{userId}})', 'Mr. Rogers (abc123)'],
  ])('@template %s', (template, expected) => {
    expect(one({ '@template': template }, { traits: { name: 'Mr. Rogers' }, userId: 'abc123' })).toBe(expected);
  });

  it('@literal', () => {
    expect(one({ '@literal': true }, {})).toBe(true);
  });

  it('@arrayPath maps each element of an array to the given shape', () => {
    const event = { properties: { products: [{ productId: '123', price: 0.5 }, { productId: '456', price: 0.99 }] } };
    expect(one({ '@arrayPath': ['$.properties.products', { some_id: { '@path': '$.productId' } }] }, event)).toEqual([{ some_id: '123' }, { some_id: '456' }]);
  });

  it("Segment's default data is the whole event", () => {
    const event = { type: 'track', event: 'E', properties: { a: 1 } };
    expect(render({ '@path': '$.' }, event)).toEqual(event);
  });

  it('a directive that fails on an event is a render failure naming the mapping, not an exception', () => {
    const rendered = renderMappingBody({ name: 'Search', settings: { url: 'https://example.com', method: 'POST', headers: {}, data: { q: { '@liquid': '{{ q | url_decode }}' } } } }, { q: '%E0%A4%A' });
    expect(rendered).toEqual({ ok: false, reason: expect.stringMatching(/^mapping "Search" could not render this message: URI malformed/) });
  });
});
