import type { MessageBody } from '../../src/delivery/types';
import { compilePlan } from '../../src/plans/compile-plan';
import { decidePlan } from '../../src/plans/plan-decision';
import { ruleProblem } from '../../src/plans/rule-rules';
import { DEFAULT_CONTROLS } from '../../src/plans/schema-controls';
import { planRules, PLAN_RULES } from '../../bench/tracking-plan-rules';

/** The `planned` bench system's plan is one the API saves, and the bench's messages meet it (like for like with `switchyard`). */
describe("the planned bench system's tracking plan", () => {
  const events = ['Order Completed', ...Array.from({ length: PLAN_RULES - 2 }, (_, i) => `Event ${i + 1}`)];
  const rules = planRules(events);

  it('has 50 rules, each one the admin API accepts', () => {
    expect(rules).toHaveLength(50);
    rules.forEach((rule, i) => expect(ruleProblem(rule, `rules[${i}]`)).toBeUndefined());
    expect(() => planRules(events.slice(1))).toThrow(/49 events/);
  });

  it("passes the bench's Order Completed message with no violation (bench/phase.ts's track)", () => {
    const stamp = '2026-11-29T00:00:00.000Z';
    const plan = compilePlan({ id: 'tp_bench', name: 'bench plan' }, rules.map((rule) => ({ ...rule, createdAt: stamp, updatedAt: stamp })));
    const body = { type: 'track', messageId: 'm-1', userId: 'user-1', event: 'Order Completed', properties: { orderId: 'order-1', total: 42.5, currency: 'EUR', items: 3 }, context: { library: { name: 'switchyard-bench', version: '1' } }, timestamp: stamp } as unknown as MessageBody;
    expect(decidePlan(body, plan, DEFAULT_CONTROLS)).toStrictEqual({ status: 'passed', violations: [], omitted: [], validatedVersion: 1, body });
  });
});
