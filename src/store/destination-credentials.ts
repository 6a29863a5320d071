import { openCredential, sealCredential, type CredentialField } from '../privacy/credential-seal';
import type { Keyring } from '../privacy/keyring';
import type { DestinationRow } from './tables';
import type { Webhook } from './types';
import type { ActionsMapping } from '../mappings/types';

/**
 * How a destinations row keeps its receiver credentials: the shared secret, the
 * signing secrets and every static header value sealed under the keyring's active key, whose id the
 * row keeps; header names and URLs stay readable (the admin API lists them, the worker routes by
 * them). Without keys (PAYLOAD_ENCRYPTION=off) they are stored as given, with no key id.
 */
export type CredentialColumns = Pick<DestinationRow, 'shared_secret' | 'signing_secret' | 'previous_signing_secret' | 'webhooks' | 'credentials_key_id'> & Partial<Pick<DestinationRow, 'mappings' | 'auth' | 'tls' | 'function_settings' | 'insert_function_settings'>>;

/** The actions destinations' credential columns: absent from rows read before them (treated as null). */
const ACTIONS_COLUMNS = ['mappings', 'auth', 'tls', 'function_settings', 'insert_function_settings'] as const;

/** The credential columns in use: plaintext. */
export type PlainCredentials = Omit<CredentialColumns, 'credentials_key_id'>;

const SHARED_SECRET: CredentialField = { kind: 'sharedSecret' };
const SIGNING_SECRET: CredentialField = { kind: 'signingSecret' };
const PREVIOUS_SIGNING_SECRET: CredentialField = { kind: 'previousSigningSecret' };
const AUTH: CredentialField = { kind: 'auth' };
const TLS: CredentialField = { kind: 'tls' };
const FUNCTION_SETTINGS: CredentialField = { kind: 'functionSettings' };
const INSERT_FUNCTION_SETTINGS: CredentialField = { kind: 'insertFunctionSettings' };

type Transform = (field: CredentialField, value: string) => string;

function transformed(destinationId: string, columns: PlainCredentials, transform: Transform): PlainCredentials {
  const each = (field: CredentialField, value: string | null) => (value === null ? null : transform(field, value));
  const webhooks = (JSON.parse(columns.webhooks) as Webhook[]).map(({ url, headers }, index) => ({
    url,
    headers: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, transform({ kind: 'header', url, name, index }, value)])),
  }));
  // A mapping's header values like a webhook's (bound to its URL); its name, URL, trigger and data stay readable.
  const mappings =
    columns.mappings == null
      ? columns.mappings
      : JSON.stringify(
          (JSON.parse(columns.mappings) as ActionsMapping[]).map((mapping, index) => ({
            ...mapping,
            settings: { ...mapping.settings, headers: Object.fromEntries(Object.entries(mapping.settings.headers).map(([name, value]) => [name, transform({ kind: 'mappingHeader', mapping: mapping.name, url: mapping.settings.url, name, index }, value)])) },
          })),
        );
  return {
    ...(columns.mappings !== undefined && { mappings }),
    ...(columns.auth !== undefined && { auth: each(AUTH, columns.auth) }),
    ...(columns.tls !== undefined && { tls: each(TLS, columns.tls) }),
    ...(columns.function_settings !== undefined && { function_settings: each(FUNCTION_SETTINGS, columns.function_settings) }),
    ...(columns.insert_function_settings !== undefined && { insert_function_settings: each(INSERT_FUNCTION_SETTINGS, columns.insert_function_settings) }),
    shared_secret: each(SHARED_SECRET, columns.shared_secret),
    signing_secret: each(SIGNING_SECRET, columns.signing_secret),
    previous_signing_secret: each(PREVIOUS_SIGNING_SECRET, columns.previous_signing_secret),
    webhooks: JSON.stringify(webhooks),
  };
}

/** The columns to write for these plaintext credentials: sealed under the active key, or as given without keys. */
export function sealedCredentials(keyring: Keyring | undefined, destinationId: string, plain: PlainCredentials): CredentialColumns {
  const columns = { shared_secret: plain.shared_secret, signing_secret: plain.signing_secret, previous_signing_secret: plain.previous_signing_secret, webhooks: plain.webhooks, ...actionsColumns(plain) };
  if (!keyring) return { ...columns, credentials_key_id: null };
  const keyId = keyring.activeKeyId;
  return { ...transformed(destinationId, columns, (field, value) => sealCredential(keyring, keyId, destinationId, field, value)), credentials_key_id: keyId };
}

/** A stored row's credentials in plaintext; throws CredentialSealError (naming the field and key id) when one does not open. */
export function openedCredentials(keyring: Keyring | undefined, row: CredentialColumns & Pick<DestinationRow, 'id'>): PlainCredentials {
  const columns = { shared_secret: row.shared_secret, signing_secret: row.signing_secret, previous_signing_secret: row.previous_signing_secret, webhooks: row.webhooks, ...actionsColumns(row) };
  const keyId = row.credentials_key_id;
  if (keyId === null) return columns;
  return transformed(row.id, columns, (field, sealed) => openCredential(keyring, keyId, row.id, field, sealed));
}

/** The actions columns a row or write carries (a partial row may leave them out: they are then left alone). */
function actionsColumns(from: Partial<Pick<DestinationRow, 'mappings' | 'auth' | 'tls' | 'function_settings' | 'insert_function_settings'>>): Partial<Pick<DestinationRow, 'mappings' | 'auth' | 'tls' | 'function_settings' | 'insert_function_settings'>> {
  return Object.fromEntries(ACTIONS_COLUMNS.filter((column) => from[column] !== undefined).map((column) => [column, from[column]]));
}
