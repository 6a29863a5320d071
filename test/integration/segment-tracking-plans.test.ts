import { ADMIN_TOKEN, startSystem, type TestSystem } from '../helpers/system';

/**
 * Tracking plans as Segment exports them load unchanged: a Terraform segment_tracking_plan with its
 * rules inline (`json_schema` as a JSON string, `key = null` on COMMON, an older draft's `id`); what
 * GET answers can be PUT back unchanged; a rule key with white space around it is kept and flagged.
 */
let system: TestSystem;
const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
beforeAll(async () => {
  system = await startSystem();
});
afterAll(async () => {
  await system.close();
});

const admin = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
  system.app.inject({ method, url, headers: auth, ...(payload !== undefined && { payload: payload as Record<string, unknown> }) });

/** segment_tracking_plan as @cdktf/hcl2json reads a Terraform export, its jsonencode(...) evaluated. */
const terraformPlan = {
  name: 'Web shop (exported)',
  description: null,
  type: 'LIVE',
  rules: [
    { type: 'COMMON', key: null, version: 1, json_schema: JSON.stringify({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', labels: {}, properties: { context: { type: 'object' } } }) },
    {
      type: 'TRACK',
      key: 'Order Completed',
      version: 1,
      json_schema: JSON.stringify({
        $schema: 'http://json-schema.org/draft-04/schema#',
        id: 'http://segment.example/order-completed',
        type: 'object',
        properties: { properties: { type: 'object', properties: { total: { type: 'number', minimum: 0, exclusiveMinimum: true } }, required: ['total'] } },
      }),
    },
    { type: 'TRACK', key: 'Signed Up\n', version: 1, json_schema: JSON.stringify({ type: 'object', properties: {} }) },
    { type: 'IDENTIFY', key: null, version: 1, json_schema: JSON.stringify({ type: 'object', properties: { traits: { type: 'object' } } }) },
  ],
};

it('loads a Terraform-exported plan with its rules unchanged, flagging the key with white space', async () => {
  const created = await admin('POST', '/admin/tracking-plans', terraformPlan);
  expect(created.statusCode).toBe(201);
  expect(created.json()).toMatchObject({ name: 'Web shop (exported)', type: 'LIVE' });
  expect(created.json().warnings).toEqual([expect.stringContaining('rules[2].key: "Signed Up\\n" has white space around it')]);

  const rules = (await admin('GET', `/admin/tracking-plans/${created.json().id}/rules`)).json().rules as Array<Record<string, unknown>>;
  expect(rules.map((r) => [r.type, r.key])).toEqual([
    ['COMMON', undefined],
    ['IDENTIFY', undefined],
    ['TRACK', 'Order Completed'],
    ['TRACK', 'Signed Up\n'],
  ]);
  // The draft-04 rule in draft-07 words: what it meant, checked by the same validator as every rule.
  expect(rules[2].jsonSchema).toMatchObject({
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: 'http://segment.example/order-completed',
    properties: { properties: { properties: { total: { type: 'number', exclusiveMinimum: 0 } } } },
  });
  expect(rules[3].warnings).toEqual([expect.stringContaining('has white space around it')]);
  expect(rules[0]).not.toHaveProperty('warnings');
});

it('takes back, unchanged, what GET answers (createdAt, updatedAt, warnings, pagination included)', async () => {
  const plan = (await admin('POST', '/admin/tracking-plans', terraformPlan)).json();
  const answered = (await admin('GET', `/admin/tracking-plans/${plan.id}/rules`)).json();
  const put = await admin('PUT', `/admin/tracking-plans/${plan.id}/rules`, answered);
  expect(put.statusCode).toBe(200);
  expect(put.json()).toEqual({ status: 'SUCCESS', warnings: [expect.stringContaining('"Signed Up\\n"')] });
  const again = (await admin('GET', `/admin/tracking-plans/${plan.id}/rules`)).json();
  const withoutTimes = (page: { rules: Array<Record<string, unknown>> }) => page.rules.map(({ createdAt: _c, updatedAt: _u, ...rule }) => rule);
  expect(withoutTimes(again)).toEqual(withoutTimes(answered));
  // A plan answered by GET goes back through PATCH too, and a rule deletes with Terraform's key = null.
  expect((await admin('PATCH', `/admin/tracking-plans/${plan.id}/rules`, { rules: [answered.rules[0]] })).statusCode).toBe(200);
  expect((await admin('DELETE', `/admin/tracking-plans/${plan.id}/rules`, { rules: [{ type: 'IDENTIFY', key: null, version: 1 }] })).statusCode).toBe(200);
  expect((await admin('GET', `/admin/tracking-plans/${plan.id}/rules`)).json().rules).toHaveLength(3);
});

it.each([
  ['a json_schema that is not JSON', { type: 'TRACK', key: 'A', version: 1, json_schema: '{"type":' }, 'rules[1].json_schema: is not JSON'],
  ['a schema that does not compile', { type: 'TRACK', key: 'A', version: 1, json_schema: '{"type":"objekt"}' }, 'rules[1].jsonSchema'],
  ['a TRACK rule with key null', { type: 'TRACK', key: null, version: 1, json_schema: '{}' }, 'rules[1].key'],
])('refuses %s naming the rule, and makes no plan', async (_, rule, message) => {
  const before = (await admin('GET', '/admin/tracking-plans')).json().trackingPlans.length;
  const reply = await admin('POST', '/admin/tracking-plans', { name: 'refused', rules: [terraformPlan.rules[0], rule] });
  expect(reply.statusCode).toBe(400);
  expect(reply.json().message).toContain(message);
  expect((await admin('GET', '/admin/tracking-plans')).json().trackingPlans.length).toBe(before);
});
