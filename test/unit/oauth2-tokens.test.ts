import { MockAgent } from 'undici';
import { OAuth2Tokens } from '../../src/activities/oauth2-tokens';

/**
 * The worker's OAuth2 token cache. The token endpoint is
 * undici's MockAgent, the dispatcher the cache is given: no network, the cache's own code throughout.
 */
const TOKEN_URL = 'https://idp.example.com';
const auth = (clientSecret: string) => ({ type: 'oauth2' as const, tokenUrl: `${TOKEN_URL}/token`, clientId: 'switchyard', clientSecret });

function tokenEndpoint(expiresIn: number): MockAgent {
  const agent = new MockAgent();
  agent.disableNetConnect();
  let n = 0;
  agent
    .get(TOKEN_URL)
    .intercept({ path: '/token', method: 'POST' })
    .reply(() => ({ statusCode: 200, data: JSON.stringify({ access_token: `token-${++n}`, token_type: 'Bearer', expires_in: expiresIn }), responseOptions: { headers: { 'content-type': 'application/json' } } }))
    .persist();
  return agent;
}

const past = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe('OAuth2Tokens', () => {
  it('prunes expired tokens: a rotated client secret leaves no entry behind once its token has expired', async () => {
    // expires_in of 10 ms: reused for 5 ms (half the lifetime, tokenReuseMs).
    const agent = tokenEndpoint(0.01);
    const tokens = new OAuth2Tokens(agent as never);
    for (let rotation = 1; rotation <= 5; rotation++) {
      expect(await tokens.token(auth(`secret-${rotation}`), 1_000)).toEqual({ token: `token-${rotation}` });
      await past(20);
    }
    expect(tokens.held).toBe(1);
    await agent.close();
  });

  it('keeps fresh tokens of every setting in use, and reuses them', async () => {
    const agent = tokenEndpoint(3600);
    const tokens = new OAuth2Tokens(agent as never);
    expect(await tokens.token(auth('a'), 1_000)).toEqual({ token: 'token-1' });
    expect(await tokens.token(auth('b'), 1_000)).toEqual({ token: 'token-2' });
    expect(await tokens.token(auth('a'), 1_000)).toEqual({ token: 'token-1' });
    expect(tokens.held).toBe(2);
    await agent.close();
  });

  it('leaves no rejection unhandled when fetching a token fails, and fetches again on the next ask', async () => {
    const tokens = new OAuth2Tokens(new MockAgent() as never);
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', record);
    try {
      (tokens as unknown as { fetch: () => Promise<never> }).fetch = () => Promise.reject(new Error('token endpoint broke'));
      await expect(tokens.token(auth('x'), 1_000)).rejects.toThrow('token endpoint broke');
      await past(20);
      expect(unhandled).toEqual([]);
      await expect(tokens.token(auth('x'), 1_000)).rejects.toThrow('token endpoint broke');
    } finally {
      process.off('unhandledRejection', record);
    }
  });
});
