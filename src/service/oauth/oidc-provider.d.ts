/**
 * The parts of oidc-provider 9 (which ships no types) the service uses: src/service/oauth/provider.ts.
 * Shapes follow node_modules/oidc-provider/docs/README.md.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface AdapterPayload {
    [key: string]: unknown;
    jti?: string;
    grantId?: string;
    uid?: string;
    userCode?: string;
    consumed?: number;
  }

  export interface Adapter {
    upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void>;
    find(id: string): Promise<AdapterPayload | undefined>;
    findByUid(uid: string): Promise<AdapterPayload | undefined>;
    findByUserCode(userCode: string): Promise<AdapterPayload | undefined>;
    consume(id: string): Promise<void>;
    destroy(id: string): Promise<void>;
    revokeByGrantId(grantId: string): Promise<void>;
  }

  export interface ClientInfo {
    clientId: string;
    clientName?: string;
    redirectUris?: string[];
    grantTypeAllowed(type: string): boolean;
    metadata(): Record<string, unknown>;
  }

  export interface InteractionDetails {
    uid: string;
    prompt: { name: string; reasons: string[]; details: Record<string, unknown> };
    params: Record<string, unknown>;
    session?: { accountId?: string };
    grantId?: string;
    lastSubmission?: Record<string, unknown>;
    exp: number;
    returnTo: string;
    save(ttl: number): Promise<string>;
  }

  export interface GrantInstance {
    accountId?: string;
    clientId?: string;
    addOIDCScope(scope: string): void;
    addOIDCClaims(claims: string[]): void;
    addResourceScope(resource: string, scope: string): void;
    save(ttl?: number): Promise<string>;
    destroy(): Promise<void>;
  }

  export interface AccessTokenInstance {
    jti: string;
    aud?: string | string[];
    grantId?: string;
    accountId?: string;
    clientId?: string;
    scope?: string;
    isExpired: boolean;
    isValid: boolean;
  }

  export interface KoaContextWithOIDC {
    oidc: {
      provider: Provider;
      client?: ClientInfo;
      result?: { consent?: { grantId?: string } };
      params?: Record<string, unknown>;
    };
  }

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    proxy: boolean;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
    interactionResult(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<string>;
    on(event: string, listener: (...args: unknown[]) => void): this;
    Grant: {
      new (properties: { accountId: string; clientId: string }): GrantInstance;
      find(id: string): Promise<GrantInstance | undefined>;
    };
    AccessToken: { find(id: string): Promise<AccessTokenInstance | undefined> };
    Client: { find(id: string): Promise<ClientInfo | undefined> };
    Interaction: { find(id: string): Promise<InteractionDetails | undefined> };
  }

  export const errors: {
    InvalidTarget: new (message?: string) => Error;
    [name: string]: new (message?: string) => Error;
  };
}
