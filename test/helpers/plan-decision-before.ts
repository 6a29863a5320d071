/**
 * Issue 42 item 8's reference: the tracking-plan decision and validators exactly as they were before
 * they were made cheaper (commit d837733: src/plans/plan-decision.ts's decidePlan, compile-plan.ts's
 * check, rule-validator.ts's ajv options with ajv-formats' own date-time and re2js's `test`), kept
 * so a property test can hold today's decision to the same verdicts on any event and controls.
 * Not to be edited to follow today's code: it is the "before".
 */
import Ajv, { type Options, type ValidateFunction } from 'ajv';
import Ajv2019 from 'ajv/dist/2019';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { RE2JS } from 're2js';
import type { MessageBody } from '../../src/delivery/types';
import { plannedNames } from '../../src/plans/compile-plan';
import type { PlanVerdict } from '../../src/plans/plan-decision';
import { draftOf, SEGMENT_KEYWORDS, type Draft } from '../../src/plans/rule-validator';
import type { SchemaControls } from '../../src/plans/schema-controls';
import type { TrackingPlanRule } from '../../src/store/types';
import { violationOf, type PlanStage, type SchemaError, type Violation } from '../../src/plans/violations';

const re2Engine = Object.assign(
  (pattern: string) => {
    const compiled = RE2JS.compile(pattern);
    return { test: (text: string) => compiled.test(text), toString: () => pattern };
  },
  { code: 're2js' },
);

const AJV_OPTIONS: Options = { strict: true, strictTypes: false, strictRequired: false, strictTuples: false, allowUnionTypes: true, allErrors: true, code: { regExp: re2Engine }, loadSchema: undefined };

const AJVS = new Map<Draft, Ajv>();
function ajvFor(draft: Draft): Ajv {
  let ajv = AJVS.get(draft);
  if (!ajv) {
    ajv = draft === '2019-09' ? new Ajv2019(AJV_OPTIONS) : draft === '2020-12' ? new Ajv2020(AJV_OPTIONS) : new Ajv(AJV_OPTIONS);
    addFormats(ajv);
    ajv.addVocabulary([...SEGMENT_KEYWORDS]);
    AJVS.set(draft, ajv);
  }
  return ajv;
}

function compileAlone(schema: Record<string, unknown>): ValidateFunction {
  const ajv = ajvFor(draftOf(schema.$schema)!);
  try {
    return ajv.compile(schema);
  } finally {
    ajv.removeSchema(schema);
  }
}

interface CompiledRuleVersion {
  version: number;
  check: (message: MessageBody) => readonly SchemaError[];
  planned: ReadonlySet<string>;
}

interface CompiledPlan {
  id: string;
  name: string;
  rules: ReadonlyMap<string, ReadonlyMap<string, readonly CompiledRuleVersion[]>>;
}

/** compile-plan.ts's compilePlan as it was (every rule here compiles). */
export function compilePlanBefore(plan: { id: string; name: string }, rules: readonly TrackingPlanRule[]): CompiledPlan {
  const byType = new Map<string, Map<string, CompiledRuleVersion[]>>();
  for (const rule of rules) {
    const validate = compileAlone(rule.jsonSchema);
    const check = (message: MessageBody): readonly SchemaError[] => (validate(message) ? [] : ((validate.errors ?? []) as SchemaError[]));
    if (!byType.has(rule.type)) byType.set(rule.type, new Map());
    const byKey = byType.get(rule.type)!;
    const key = rule.key ?? '';
    if (!byKey.has(key)) byKey.set(key, []);
    byKey.get(key)!.push({ version: rule.version, check, planned: plannedNames(rule.type, rule.jsonSchema) });
  }
  for (const byKey of byType.values()) for (const versions of byKey.values()) versions.sort((a, b) => a.version - b.version);
  return { id: plan.id, name: plan.name, rules: byType };
}

// plan-decision.ts as it was, from here on.
/** A rule's versions (two map reads: no key string is built per message). */
const ruleFor = (plan: CompiledPlan, type: string, key = '') => plan.rules.get(type)?.get(key);

const PASSED = (body: MessageBody): PlanVerdict => ({ status: 'passed', violations: [], omitted: [], body });

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `context.protocols.event_version` when it is a whole number. */
function eventVersionOf(body: MessageBody): number | undefined {
  const protocols = isObject(body.context) ? body.context.protocols : undefined;
  const version = isObject(protocols) ? protocols.event_version : undefined;
  return typeof version === 'number' && Number.isInteger(version) ? version : undefined;
}

/** The version asked for when the rule has it, otherwise the oldest, as on Segment. */
function versionFor(versions: readonly CompiledRuleVersion[], asked: number | undefined): CompiledRuleVersion | undefined {
  return versions.find((rule) => rule.version === asked) ?? versions[0];
}

/** Where a message type's rule is found, the section its names live in, and the controls that apply. */
function ruleOf(plan: CompiledPlan, body: MessageBody): { found?: readonly CompiledRuleVersion[]; unplannedEvent: boolean; section?: 'properties' | 'traits' } {
  switch (body.type) {
    case 'track': {
      const found = ruleFor(plan, 'TRACK', String(body.event));
      return { found, unplannedEvent: !found, section: 'properties' };
    }
    case 'identify':
      return { found: ruleFor(plan, 'IDENTIFY'), unplannedEvent: false, section: 'traits' };
    case 'group':
      return { found: ruleFor(plan, 'GROUP'), unplannedEvent: false, section: 'traits' };
    case 'page':
    case 'screen': {
      const type = body.type.toUpperCase();
      return { found: ruleFor(plan, type, typeof body.name === 'string' ? body.name : '') ?? ruleFor(plan, type), unplannedEvent: false, section: 'properties' };
    }
    default:
      return { unplannedEvent: false };
  }
}

/** What each stage does on violations, for this message type: `block`, `omit` or nothing (report only). */
interface Effects {
  unplannedEvent?: 'block';
  unplannedNames?: 'omit';
  ruleViolations?: 'block' | 'omit';
  commonViolations?: 'block' | 'omit';
}

function effectsOf(type: MessageBody['type'], controls: SchemaControls): Effects {
  // Assigned, not spread: this runs for every message of a source with a plan.
  const effects: Effects = {};
  if (type === 'track') {
    const t = controls.track;
    if (!t.allowUnplannedEvents) effects.unplannedEvent = 'block';
    if (!t.allowUnplannedEventProperties) effects.unplannedNames = 'omit';
    if (!t.allowEventOnViolations) effects.ruleViolations = 'block';
    else if (!t.allowPropertiesOnViolations) effects.ruleViolations = 'omit';
    return withCommon(effects, t.commonEventOnViolations);
  }
  if (type === 'identify' || type === 'group') {
    const t = controls[type];
    if (!t.allowUnplannedTraits) effects.unplannedNames = 'omit';
    if (!t.allowTraitsOnViolations) effects.ruleViolations = 'omit';
    return withCommon(effects, t.commonEventOnViolations);
  }
  // Page and screen have no controls of their own in Segment's shape: the track common setting applies.
  if (type === 'page' || type === 'screen') return withCommon(effects, controls.track.commonEventOnViolations);
  return effects;
}

function withCommon(effects: Effects, setting: string): Effects {
  if (setting === 'BLOCK') effects.commonViolations = 'block';
  else if (setting.startsWith('OMIT')) effects.commonViolations = 'omit';
  return effects;
}

/** The body without these names of its section; `context.protocols.omitted` lists them (names, never values). */
function withoutNames(body: MessageBody, section: 'properties' | 'traits', names: readonly string[], omittedBefore: readonly string[]): MessageBody {
  const values = isObject(body[section]) ? (body[section]) : {};
  const kept = Object.fromEntries(Object.entries(values).filter(([name]) => !names.includes(name)));
  const context = isObject(body.context) ? body.context : {};
  const protocols = isObject(context.protocols) ? context.protocols : {};
  const omitted = [...omittedBefore, ...names.map((name) => `${section}.${name}`)];
  return { ...body, [section]: kept, context: { ...context, protocols: { ...protocols, omitted } } };
}

/** The top-level names of `section` that these violations are about (a nested field omits its top-level name). */
function offendingNames(violations: readonly Violation[], section: 'properties' | 'traits', present: Record<string, unknown>): string[] {
  const names = new Set<string>();
  for (const { field } of violations) {
    const [head, name] = field.split('.');
    if (head === section && name !== undefined && Object.hasOwn(present, name)) names.add(name);
  }
  return [...names];
}

/** The message as omission has left it so far, the names omitted, and the stage that omitted first. */
interface Omission {
  current: MessageBody;
  omitted: string[];
  omittedBy?: PlanStage;
}

function omitFrom(state: Omission, section: 'properties' | 'traits' | undefined, names: string[], stage: PlanStage): void {
  if (!section || names.length === 0) return;
  state.current = withoutNames(state.current, section, names, state.omitted);
  state.omitted = [...state.omitted, ...names.map((name) => `${section}.${name}`)];
  state.omittedBy ??= stage;
}

function noOmission(): void {}

function blockedVerdict(body: MessageBody, violations: Violation[], stage: PlanStage, validatedVersion?: number): PlanVerdict {
  return { status: 'blocked', decidedBy: stage, violations, omitted: [], ...(validatedVersion !== undefined && { validatedVersion }), body };
}

function violationsOf(errors: readonly SchemaError[], stage: PlanStage): Violation[] {
  const found: Violation[] = [];
  for (const error of errors) found.push(violationOf(error, stage));
  return found;
}

/**
 * The plan's verdict on one message under a source's controls. No plan, or a type no plan speaks
 * of (alias), passes unchanged.
 */
export function decidePlanBefore(body: MessageBody, plan: CompiledPlan | undefined, controls: SchemaControls): PlanVerdict {
  if (!plan || body.type === 'alias') return PASSED(body);
  const effects = effectsOf(body.type, controls);
  const { found, unplannedEvent, section } = ruleOf(plan, body);
  const violations: Violation[] = [];
  // What omission has left so far (no closures here: this runs for every message of a planned source).
  const state: Omission = { current: body, omitted: [] };
  const omit = section ? omitFrom : noOmission;

  // 1. Unplanned event.
  if (unplannedEvent) {
    violations.push({ violationType: 'Unplanned-Event', field: 'event', description: `event "${String(body.event)}" is not in the tracking plan`, stage: 'unplanned-event' });
    if (effects.unplannedEvent === 'block') return blockedVerdict(body, violations, 'unplanned-event');
  }
  const rule = found && versionFor(found, eventVersionOf(body));

  if (rule && section) {
    // 2. Unplanned properties or traits: names, never values.
    const values = isObject(body[section]) ? (body[section]) : {};
    const unplanned: string[] = [];
    for (const name of Object.keys(values)) if (!rule.planned.has(name)) unplanned.push(name);
    for (const name of unplanned) {
      violations.push({ violationType: 'Unplanned-Property', field: `${section}.${name}`, description: `${section}.${name} is not planned for this ${body.type === 'track' ? 'event' : body.type}`, stage: 'unplanned-properties' });
    }
    if (effects.unplannedNames === 'omit') omit(state, section, unplanned, 'unplanned-properties');

    // 3. The rule's own schema, on what the earlier stages left.
    const found3 = violationsOf(rule.check(state.current), 'rule-violations');
    violations.push(...found3);
    if (found3.length > 0 && effects.ruleViolations === 'block') return blockedVerdict(body, violations, 'rule-violations', rule.version);
    if (found3.length > 0 && effects.ruleViolations === 'omit') omit(state, section, offendingNames(found3, section, (state.current[section] as Record<string, unknown>) ?? {}), 'rule-violations');
  }

  // 4. The common schema, which every message of the source meets.
  const common = ruleFor(plan, 'COMMON');
  const commonRule = common && versionFor(common, eventVersionOf(body));
  if (commonRule) {
    const found4 = violationsOf(commonRule.check(state.current), 'common-violations');
    violations.push(...found4);
    if (found4.length > 0 && effects.commonViolations === 'block') return blockedVerdict(body, violations, 'common-violations', rule?.version);
    if (found4.length > 0 && effects.commonViolations === 'omit' && section) omit(state, section, offendingNames(found4, section, isObject(state.current[section]) ? state.current[section] : {}), 'common-violations');
  }

  const { current, omitted, omittedBy } = state;
  return {
    status: omitted.length > 0 ? 'omitted' : 'passed',
    ...(omittedBy && omitted.length > 0 && { decidedBy: omittedBy }),
    violations,
    omitted,
    ...(rule && { validatedVersion: rule.version }),
    body: current,
  };
}
