import { randomBytes } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import { ID_PREFIX, type FunctionKind } from '../functions/handlers';
import type { FunctionRow, FunctionVersionRow, Tables } from './tables';

/**
 * Functions in Segment's shape: a class with its settings definitions, and its code in versions.
 * A save of new code adds a version and leaves the deployed one running; a deploy names the
 * version instances run. The first version is deployed when the function is created (nothing
 * runs it yet, and an instance made next runs the code just saved). The admin API calls these
 * inside its audited write transaction, so a version and its function are written together.
 */

export const SETTING_TYPES = ['STRING', 'BOOLEAN', 'ARRAY', 'TEXT_MAP'] as const;

export interface FunctionSetting {
  name: string;
  label: string;
  description: string;
  type: (typeof SETTING_TYPES)[number];
  required: boolean;
  sensitive: boolean;
}

export interface FunctionRecord {
  id: string;
  resourceType: FunctionKind;
  displayName: string;
  description: string | null;
  logoUrl: string | null;
  settings: FunctionSetting[];
  latestVersion: number;
  deployedVersion: number | null;
  deployedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface FunctionVersion {
  version: number;
  code: string;
  createdAt: string;
}

export interface FunctionInput {
  resourceType: FunctionKind;
  displayName: string;
  description: string | null;
  logoUrl: string | null;
  settings: FunctionSetting[];
  code: string;
}

export type FunctionPatch = Partial<Omit<FunctionInput, 'resourceType'>>;

export interface FunctionStore {
  create(input: FunctionInput): Promise<FunctionRecord & { code: string }>;
  list(resourceType?: FunctionKind): Promise<FunctionRecord[]>;
  /** The function with its latest code. */
  get(id: string): Promise<(FunctionRecord & { code: string }) | undefined>;
  /** New code becomes a new version (the same code saved again does not). */
  update(id: string, patch: FunctionPatch): Promise<(FunctionRecord & { code: string }) | undefined>;
  delete(id: string): Promise<boolean>;
  versions(id: string): Promise<FunctionVersion[]>;
  version(id: string, version: number): Promise<FunctionVersion | undefined>;
  /** Deploys `version` (the latest when absent); undefined when the function or version does not exist. */
  deploy(id: string, version?: number): Promise<FunctionRecord | undefined>;
}

/** Segment's id forms: `dfn_`/`ifnd_` + 24 hex characters, `sfnc_` + 22. */
function newFunctionId(kind: FunctionKind): string {
  return (
    ID_PREFIX[kind] +
    randomBytes(12)
      .toString('hex')
      .slice(0, kind === 'SOURCE' ? 22 : 24)
  );
}

function toRecord(row: Selectable<FunctionRow>): FunctionRecord {
  return {
    id: row.id,
    resourceType: row.resource_type as FunctionKind,
    displayName: row.display_name,
    description: row.description,
    logoUrl: row.logo_url,
    settings: JSON.parse(row.settings) as FunctionSetting[],
    latestVersion: row.latest_version,
    deployedVersion: row.deployed_version,
    deployedAt: row.deployed_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

const toVersion = (row: Selectable<FunctionVersionRow>): FunctionVersion => ({ version: row.version, code: row.code, createdAt: row.created_at });

export function functionStore(db: Kysely<Tables>): FunctionStore {
  const withCode = async (row: Selectable<FunctionRow> | undefined) => {
    if (!row) return undefined;
    const latest = await db.selectFrom('function_versions').selectAll().where('function_id', '=', row.id).where('version', '=', row.latest_version).executeTakeFirstOrThrow();
    return { ...toRecord(row), code: latest.code };
  };
  const row = (id: string) => db.selectFrom('functions').selectAll().where('id', '=', id).executeTakeFirst();

  return {
    async create(input) {
      const at = new Date().toISOString();
      const id = newFunctionId(input.resourceType);
      const fn: FunctionRow = {
        id,
        resource_type: input.resourceType,
        display_name: input.displayName,
        description: input.description,
        logo_url: input.logoUrl,
        settings: JSON.stringify(input.settings),
        latest_version: 1,
        deployed_version: 1,
        deployed_at: at,
        created_at: at,
        updated_at: at,
      };
      await db.insertInto('functions').values(fn).execute();
      await db.insertInto('function_versions').values({ function_id: id, version: 1, code: input.code, created_at: at }).execute();
      return { ...toRecord(fn), code: input.code };
    },

    async list(resourceType) {
      let query = db.selectFrom('functions').selectAll().orderBy('created_at').orderBy('id');
      if (resourceType) query = query.where('resource_type', '=', resourceType);
      return (await query.execute()).map(toRecord);
    },

    get: async (id) => withCode(await row(id)),

    async update(id, patch) {
      const at = new Date().toISOString();
      const current = await row(id);
      if (!current) return undefined;
      let latest = current.latest_version;
      if (patch.code !== undefined) {
        const code = await db.selectFrom('function_versions').select('code').where('function_id', '=', id).where('version', '=', latest).executeTakeFirstOrThrow();
        if (code.code !== patch.code) {
          latest += 1;
          await db.insertInto('function_versions').values({ function_id: id, version: latest, code: patch.code, created_at: at }).execute();
        }
      }
      await db
        .updateTable('functions')
        .set({
          ...(patch.displayName !== undefined && { display_name: patch.displayName }),
          ...(patch.description !== undefined && { description: patch.description }),
          ...(patch.logoUrl !== undefined && { logo_url: patch.logoUrl }),
          ...(patch.settings !== undefined && { settings: JSON.stringify(patch.settings) }),
          latest_version: latest,
          updated_at: at,
        })
        .where('id', '=', id)
        .execute();
      return withCode(await row(id));
    },

    async delete(id) {
      const result = await db.deleteFrom('functions').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    async versions(id) {
      return (await db.selectFrom('function_versions').selectAll().where('function_id', '=', id).orderBy('version', 'desc').execute()).map(toVersion);
    },

    async version(id, version) {
      const found = await db.selectFrom('function_versions').selectAll().where('function_id', '=', id).where('version', '=', version).executeTakeFirst();
      return found && toVersion(found);
    },

    async deploy(id, version) {
      const current = await row(id);
      if (!current) return undefined;
      const target = version ?? current.latest_version;
      if (!(await db.selectFrom('function_versions').select('version').where('function_id', '=', id).where('version', '=', target).executeTakeFirst())) return undefined;
      const at = new Date().toISOString();
      await db.updateTable('functions').set({ deployed_version: target, deployed_at: at, updated_at: at }).where('id', '=', id).execute();
      return toRecord((await row(id))!);
    },
  };
}
