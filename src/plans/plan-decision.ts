import type { MessageBody } from '../delivery/types';
import type { SchemaControls } from './schema-controls';
import { violationOf, type PlanStage, type SchemaError, type Violation } from './violations';
import { boundViolations, boundedName } from './violation-bounds';

/**
 * The one decision a tracking plan makes about a message, at ingest, before
 * the per-destination decision (rules/delivery-decision.ts, whose `plan` rule reads the status).
 * Pure: the compiled plan and the controls are looked up by the caller.
 *
 * One documented order decides, each setting applying on its own (docs/api.md "Tracking plans"):
 * 1. unplanned event (TRACK only): no rule for the event name → blocked unless allowUnplannedEvents;
 * 2. unplanned properties (traits): names the rule does not list → omitted unless allowed;
 * 3. rule violations: the rule's schema, on what step 2 left → blocked (track, unless
 *    allowEventOnViolations), else the offending names omitted (unless allow…OnViolations);
 * 4. common violations: the COMMON rule's schema → ALLOW, BLOCK, or OMIT_PROPERTIES/OMIT_TRAITS.
 * The first stage that blocks decides; `decidedBy` names it, or the first that omitted.
 */

/** One saved rule, compiled: `check` answers its schema's errors for a message (none: it passes). */
export interface CompiledRuleVersion {
  version: number;
  check: (message: MessageBody) => readonly SchemaError[];
  /** The names the rule plans under `properties` (TRACK, PAGE, SCREEN) or `traits` (IDENTIFY, GROUP). */
  planned: ReadonlySet<string>;
}

export interface CompiledPlan {
  id: string;
  name: string;
  /** By rule type (TRACK, IDENTIFY, GROUP, PAGE, SCREEN, COMMON), then key ('' for none): each rule's versions oldest first. */
  rules: ReadonlyMap<string, ReadonlyMap<string, readonly CompiledRuleVersion[]>>;
}

/** A rule's versions (two map reads: no key string is built per message). */
const ruleFor = (plan: CompiledPlan, type: string, key = '') => plan.rules.get(type)?.get(key);

export type PlanStatus = 'passed' | 'omitted' | 'blocked';

export interface PlanVerdict {
  status: PlanStatus;
  /** The stage that decided a blocked or omitted status. */
  decidedBy?: PlanStage;
  violations: Violation[];
  /** Omitted names, `properties.coupon` / `traits.age`: what `context.protocols.omitted` lists. */
  omitted: string[];
  /** The rule version validated against (the event's `context.protocols.event_version`, else the oldest). */
  validatedVersion?: number;
  /** The message as it goes on: the same object when nothing was omitted. */
  body: MessageBody;
}

const PASSED = (body: MessageBody): PlanVerdict => ({ status: 'passed', violations: [], omitted: [], body });

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `context.protocols.event_version` when it is a whole number. */
export function eventVersionOf(body: MessageBody): number | undefined {
  const protocols = isObject(body.context) ? body.context.protocols : undefined;
  const version = isObject(protocols) ? protocols.event_version : undefined;
  return typeof version === 'number' && Number.isInteger(version) ? version : undefined;
}

/** The version asked for when the rule has it, otherwise the oldest, as on Segment. */
export function versionFor(versions: readonly CompiledRuleVersion[], asked: number | undefined): CompiledRuleVersion | undefined {
  return versions.find((rule) => rule.version === asked) ?? versions[0];
}

/** A message type's rule versions: by event name for track; by name, else the keyless rule, for page and screen. */
function rulesOf(plan: CompiledPlan, body: MessageBody): readonly CompiledRuleVersion[] | undefined {
  switch (body.type) {
    case 'track':
      return ruleFor(plan, 'TRACK', String(body.event));
    case 'identify':
      return ruleFor(plan, 'IDENTIFY');
    case 'group':
      return ruleFor(plan, 'GROUP');
    case 'page':
    case 'screen': {
      const type = body.type === 'page' ? 'PAGE' : 'SCREEN';
      return ruleFor(plan, type, typeof body.name === 'string' ? body.name : '') ?? ruleFor(plan, type);
    }
    default:
      return undefined;
  }
}

/** The section a message type's names live in, if its rules plan names. */
function sectionOf(type: MessageBody['type']): 'properties' | 'traits' | undefined {
  if (type === 'track' || type === 'page' || type === 'screen') return 'properties';
  if (type === 'identify' || type === 'group') return 'traits';
  return undefined;
}

/** What each stage does on violations, for this message type: `block`, `omit` or nothing (report only). */
interface Effects {
  unplannedEvent?: 'block';
  unplannedNames?: 'omit';
  ruleViolations?: 'block' | 'omit';
  commonViolations?: 'block' | 'omit';
}

export function effectsOf(type: MessageBody['type'], controls: SchemaControls): Effects {
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

/**
 * The top-level names of `section` that these schema errors are about (a nested field omits its
 * top-level name). Read from the error's JSON Pointer, segment by segment with RFC 6901's escapes
 * undone, never from the dotted field: a name may itself hold a `.` (`card.number`) or a `/`.
 */
function offendingNames(errors: readonly SchemaError[], section: 'properties' | 'traits', present: Record<string, unknown>): string[] {
  const names = new Set<string>();
  for (const { instancePath } of errors) {
    const segments = instancePath.split('/');
    if (segments.length < 3 || segments[1] !== section) continue;
    const name = segments[2].replace(/~1/g, '/').replace(/~0/g, '~');
    if (Object.hasOwn(present, name)) names.add(name);
  }
  return [...names];
}

/** The message as omission has left it so far, the names omitted, and the stage that omitted first. */
interface Omission {
  current: MessageBody;
  omitted: string[];
  omittedBy?: PlanStage;
}

/** Omits names from the message as omission has left it; the state is made at the first omission (most messages have none). */
function omitFrom(state: Omission | undefined, body: MessageBody, section: 'properties' | 'traits', names: string[], stage: PlanStage): Omission | undefined {
  if (names.length === 0) return state;
  const current = state ?? { current: body, omitted: [] };
  current.current = withoutNames(current.current, section, names, current.omitted);
  current.omitted = [...current.omitted, ...names.map((name) => `${section}.${name}`)];
  current.omittedBy ??= stage;
  return current;
}

function blockedVerdict(body: MessageBody, found: Violation[], stage: PlanStage, validatedVersion?: number): PlanVerdict {
  const violations = boundViolations(found);
  return validatedVersion === undefined ? { status: 'blocked', decidedBy: stage, violations, omitted: [], body } : { status: 'blocked', decidedBy: stage, violations, omitted: [], validatedVersion, body };
}

/** The violations these schema errors are, appended to the message's list (made now if none yet). */
function addViolations(violations: Violation[] | undefined, errors: readonly SchemaError[], stage: PlanStage): Violation[] {
  const list = violations ?? [];
  for (const error of errors) list.push(violationOf(error, stage));
  return list;
}

/** The verdict when no stage blocked: the key order and the keys present are those it always had. */
function finalVerdict(body: MessageBody, found: Violation[], state: Omission | undefined, validatedVersion: number | undefined): PlanVerdict {
  // Counted, stored and forwarded as bounded (violation-bounds.ts); omission above read every one.
  const violations = found.length === 0 ? found : boundViolations(found);
  if (!state) return validatedVersion === undefined ? { status: 'passed', violations, omitted: [], body } : { status: 'passed', violations, omitted: [], validatedVersion, body };
  const { current, omitted, omittedBy } = state;
  return validatedVersion === undefined ? { status: 'omitted', decidedBy: omittedBy, violations, omitted, body: current } : { status: 'omitted', decidedBy: omittedBy, violations, omitted, validatedVersion, body: current };
}

/**
 * The plan's verdict on one message under a source's controls. No plan, or a type no plan speaks
 * of (alias), passes unchanged.
 */
export function decidePlan(body: MessageBody, plan: CompiledPlan | undefined, controls: SchemaControls): PlanVerdict {
  if (!plan || body.type === 'alias') return PASSED(body);
  // No closures, no intermediate objects: this runs for every message of a planned source, and a
  // valid event (most of them) makes nothing but its verdict.
  const effects = effectsOf(body.type, controls);
  const found = rulesOf(plan, body);
  const section = sectionOf(body.type);
  let violations: Violation[] | undefined;
  let state: Omission | undefined;

  // 1. Unplanned event.
  if (body.type === 'track' && !found) {
    violations = [{ violationType: 'Unplanned-Event', field: 'event', description: `event "${boundedName(String(body.event))}" is not in the tracking plan`, stage: 'unplanned-event' }];
    if (effects.unplannedEvent === 'block') return blockedVerdict(body, violations, 'unplanned-event');
  }
  const asked = eventVersionOf(body);
  const rule = found && versionFor(found, asked);

  if (rule && section) {
    // 2. Unplanned properties or traits: names, never values.
    const values = body[section];
    let unplanned: string[] | undefined;
    if (isObject(values)) {
      for (const name of Object.keys(values)) {
        if (rule.planned.has(name)) continue;
        (unplanned ??= []).push(name);
        (violations ??= []).push({ violationType: 'Unplanned-Property', field: `${section}.${name}`, description: `${section}.${name} is not planned for this ${body.type === 'track' ? 'event' : body.type}`, stage: 'unplanned-properties' });
      }
    }
    if (unplanned && effects.unplannedNames === 'omit') state = omitFrom(state, body, section, unplanned, 'unplanned-properties');

    // 3. The rule's own schema, on what the earlier stages left.
    const errors = rule.check(state ? state.current : body);
    if (errors.length > 0) {
      violations = addViolations(violations, errors, 'rule-violations');
      if (effects.ruleViolations === 'block') return blockedVerdict(body, violations, 'rule-violations', rule.version);
      if (effects.ruleViolations === 'omit') {
        const current = state ? state.current : body;
        state = omitFrom(state, body, section, offendingNames(errors, section, isObject(current[section]) ? current[section] : {}), 'rule-violations');
      }
    }
  }

  // 4. The common schema, which every message of the source meets.
  const common = ruleFor(plan, 'COMMON');
  const commonRule = common && versionFor(common, asked);
  if (commonRule) {
    const errors = commonRule.check(state ? state.current : body);
    if (errors.length > 0) {
      violations = addViolations(violations, errors, 'common-violations');
      if (effects.commonViolations === 'block') return blockedVerdict(body, violations, 'common-violations', rule?.version);
      if (effects.commonViolations === 'omit' && section) {
        const current = state ? state.current : body;
        state = omitFrom(state, body, section, offendingNames(errors, section, isObject(current[section]) ? current[section] : {}), 'common-violations');
      }
    }
  }

  return finalVerdict(body, violations ?? [], state, rule ? rule.version : undefined);
}
