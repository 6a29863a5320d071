import { compileProgram } from '../programs/compile-program';
import { headerNameRule, headerValueRule, webhookUrlRule, type RuleViolation } from '../delivery/webhook-rules';
import { MASKED_VALUE } from './masked-headers';
import { MAX_MAPPING_HEADERS, MAX_MAPPINGS, type ActionsMapping, type OutboundAuth, type TlsSettings } from './types';

/**
 * The rules a saved mapping keeps, checked on create and PATCH so a mapping that can
 * never render is a 400 (naming the mapping, the field and the directive), not hours of failed
 * attempts. The mapping language is Segment's own validator (`@segment/actions-core`): a mapping
 * Segment saves, Switchyard saves.
 */

/** Segment's dashboard names a mapping in at most this many characters. */
export const MAX_MAPPING_NAME_LENGTH = 64;

function mappingViolation(mapping: ActionsMapping, index: number): RuleViolation | undefined {
  const at = `mappings[${index}]`;
  const named = `mapping ${JSON.stringify(mapping.name)}`;
  if (mapping.name.trim() === '') return { field: `${at}.name`, rule: 'must not be empty' };
  if (mapping.name.length > MAX_MAPPING_NAME_LENGTH) return { field: `${at}.name`, rule: `at most ${MAX_MAPPING_NAME_LENGTH} characters` };
  const trigger = compileProgram('fql', mapping.trigger);
  if (!trigger.ok) return { field: `${at}.trigger`, rule: `${named}: at column ${trigger.error.column}: ${trigger.error.rule}` };
  const urlRule = webhookUrlRule(mapping.settings.url);
  if (urlRule) return { field: `${at}.settings.url`, rule: `${named}: ${urlRule}` };
  const headers = Object.entries(mapping.settings.headers);
  if (headers.length > MAX_MAPPING_HEADERS) return { field: `${at}.settings.headers`, rule: `${named}: at most ${MAX_MAPPING_HEADERS} static headers per mapping` };
  for (const [name, value] of headers) {
    const rule = headerNameRule(name) ?? headerValueRule(value);
    if (rule) return { field: `${at}.settings.headers.${name}`, rule: `${named}: ${rule}` };
  }
  const data = compileProgram('mapping', { data: mapping.settings.data, trigger: trigger.program });
  if (!data.ok) return { field: `${at}.settings.data`, rule: `${named}: ${data.error.rule}` };
  return undefined;
}

/** The first rule a destination's mappings break: count, unique names, and each mapping's own rules. */
export function findMappingsViolation(mappings: ActionsMapping[]): RuleViolation | undefined {
  if (mappings.length === 0) return { field: 'mappings', rule: 'an actions destination needs at least one mapping' };
  if (mappings.length > MAX_MAPPINGS) return { field: 'mappings', rule: `at most ${MAX_MAPPINGS} mappings per destination` };
  const seen = new Set<string>();
  for (const [index, mapping] of mappings.entries()) {
    if (seen.has(mapping.name)) return { field: `mappings[${index}].name`, rule: `mapping names must be unique within a destination; ${JSON.stringify(mapping.name)} is used twice` };
    seen.add(mapping.name);
    const violation = mappingViolation(mapping, index);
    if (violation) return violation;
  }
  return undefined;
}

/** The secret field of an auth setting sent back as the mask: it would otherwise be used as the secret itself. */
function maskedSecretField(auth: OutboundAuth): string | undefined {
  if (auth.type === 'bearer') return auth.token === MASKED_VALUE ? 'auth.token' : undefined;
  if (auth.type === 'basic') return auth.password === MASKED_VALUE ? 'auth.password' : undefined;
  return auth.clientSecret === MASKED_VALUE ? 'auth.clientSecret' : undefined;
}

/** Hosts whose traffic never leaves the machine: a local token endpoint (a sidecar, a test) may speak http. */
const LOOPBACK_HOST = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/**
 * RFC 6749 §3.2: the token endpoint MUST be reached over TLS, since the client secret travels in the
 * request body (client_secret_post). `webhookUrlRule` has already checked the URL parses.
 */
function tokenUrlTransportRule(tokenUrl: string): string | undefined {
  const url = new URL(tokenUrl);
  if (url.protocol === 'https:' || LOOPBACK_HOST.test(url.hostname)) return undefined;
  return 'must use https (RFC 6749 §3.2: the client secret travels in the request); http only to a loopback address';
}

const PEM = (label: RegExp) => new RegExp(`-----BEGIN ${label.source}-----[\\s\\S]+-----END ${label.source}-----`);

/** Outbound auth and mutual TLS: URLs and PEM shapes (values are never echoed). */
export function findAuthViolation(auth: OutboundAuth | null | undefined, tls: TlsSettings | null | undefined): RuleViolation | undefined {
  const masked = auth && maskedSecretField(auth);
  if (masked) return { field: masked, rule: `${MASKED_VALUE} is the mask the API shows in place of a secret; auth is replaced whole, so send the secret itself` };
  if (auth?.type === 'oauth2') {
    const rule = webhookUrlRule(auth.tokenUrl) ?? tokenUrlTransportRule(auth.tokenUrl);
    if (rule) return { field: 'auth.tokenUrl', rule };
  }
  if (auth?.type === 'bearer' || auth?.type === 'basic') {
    const value = auth.type === 'bearer' ? auth.token : `${auth.username}:${auth.password}`;
    const rule = headerValueRule(value);
    if (rule) return { field: auth.type === 'bearer' ? 'auth.token' : 'auth.password', rule };
  }
  if (tls) {
    if (!PEM(/CERTIFICATE/).test(tls.certificate)) return { field: 'tls.certificate', rule: 'must be a PEM certificate (-----BEGIN CERTIFICATE-----)' };
    if (!PEM(/(?:RSA |EC |ENCRYPTED )?PRIVATE KEY/).test(tls.privateKey)) return { field: 'tls.privateKey', rule: 'must be a PEM private key (-----BEGIN PRIVATE KEY-----)' };
  }
  return undefined;
}
