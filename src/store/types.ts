/** Domain records as the rest of Switchyard sees them (the SQL shape stays inside src/store). */

export interface Source {
  id: string;
  name: string;
  /** Last four characters of the write key, so operators can tell keys apart; the key itself is stored hashed. */
  writeKeyHint: string;
  createdAt: string;
}

export interface Webhook {
  url: string;
  /** Static headers added to every request to this URL (seed: at most 5). */
  headers: Record<string, string>;
}

export interface Destination {
  id: string;
  sourceId: string;
  name: string;
  enabled: boolean;
  /** Seed: when set, every request carries X-Signature. Never leaves the store except to sign. */
  sharedSecret: string | null;
  webhooks: Webhook[];
  createdAt: string;
  updatedAt: string;
}

export interface NewDestination {
  name?: string;
  enabled: boolean;
  sharedSecret?: string | null;
  webhooks: Webhook[];
}

export type DestinationPatch = Partial<NewDestination>;

export interface Regulation {
  id: string;
  regulationType: 'DELETE';
  subjectType: 'USER_ID';
  subjectIds: string[];
  createdAt: string;
}

export interface Store {
  sources: {
    /** Returns the write key in clear exactly once, at creation. */
    create(name: string): Promise<{ source: Source; writeKey: string }>;
    get(id: string): Promise<Source | undefined>;
    list(): Promise<Source[]>;
    /** Also deletes the source's destinations. Returns false when there was no such source. */
    delete(id: string): Promise<boolean>;
    findByWriteKey(writeKey: string): Promise<Source | undefined>;
  };
  destinations: {
    create(sourceId: string, input: NewDestination): Promise<Destination>;
    get(id: string): Promise<Destination | undefined>;
    update(id: string, patch: DestinationPatch): Promise<Destination | undefined>;
    delete(id: string): Promise<boolean>;
    listBySource(sourceId: string): Promise<Destination[]>;
    /** Ids of the enabled destinations with at least one webhook: what a message from this source is delivered to. */
    listEnabledIds(sourceId: string): Promise<string[]>;
    /**
     * Sources with at least one enabled destination that has a webhook, the same test as
     * listEnabledIds (regulations notify each of them).
     */
    listSourceIdsWithEnabled(): Promise<string[]>;
  };
  regulations: {
    create(input: Omit<Regulation, 'id' | 'createdAt'>): Promise<Regulation>;
    get(id: string): Promise<Regulation | undefined>;
  };
  close(): Promise<void>;
}
